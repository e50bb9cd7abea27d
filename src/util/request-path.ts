/**
 * The URL of an HTTP request's target, read as a path on this server. `new URL(target, base)` takes a
 * target starting with `//` as another host (and throws on a bad one: `//%5C/`), so the base is
 * prefixed instead. Undefined when even that is no URL: the caller answers 400.
 */
export function requestUrl(target: string | undefined): URL | undefined {
  const path = target === undefined || target === '' ? '/' : target.startsWith('/') ? target : `/${target}`;
  try {
    return new URL(`http://server${path}`);
  } catch {
    return undefined;
  }
}
