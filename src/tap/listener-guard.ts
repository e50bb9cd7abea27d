/**
 * DNS-rebinding protection for the tap's listener: the `Host` header must name an allowed host and
 * an `Origin` header, when present, an allowed origin. A browser page on an attacker's domain that
 * resolves to 127.0.0.1 sends its own domain in both, so it is refused; non-browser MCP clients send
 * no `Origin` and the tap's own address as `Host`. No IO (it remembers only the last `Host` that passed).
 */

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface GuardOptions {
  /** The address the tap listens on (hostname or IP literal). */
  listenHost: string;
  /** Extra allowed `Host` values: a hostname (any port) or `host:port`. */
  allowedHosts?: readonly string[];
  /** Extra allowed origins: a hostname (any scheme and port) or a full origin `scheme://host[:port]`. */
  allowedOrigins?: readonly string[];
}

export type GuardVerdict = { ok: true } | { ok: false; detail: string };

const OK: GuardVerdict = { ok: true };

export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]' || host === '';
}

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** `[::1]` style for IPv6 literals, lower-cased otherwise. */
function bracket(host: string): string {
  const h = host.toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/** The hostname part of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`). */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) {
    const close = h.indexOf(']');
    return close === -1 ? h : h.slice(0, close + 1);
  }
  const colon = h.indexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

export class ListenerGuard {
  private readonly hostNames = new Set<string>();
  private readonly hostExact = new Set<string>();
  private readonly originNames = new Set<string>();
  private readonly originExact = new Set<string>();
  /** Bound to a wildcard address with no allowed hosts given: the `Host` check cannot know the names, so it is off. */
  readonly hostCheckOff: boolean;
  /** The last `Host` value that passed: clients send the same one on every request (checked per request). */
  private lastHostOk: string | undefined;

  constructor(opts: GuardOptions) {
    for (const n of LOOPBACK_NAMES) {
      this.hostNames.add(n);
      this.originNames.add(n);
    }
    if (!isWildcardHost(opts.listenHost)) {
      this.hostNames.add(bracket(opts.listenHost));
      this.originNames.add(bracket(opts.listenHost));
    }
    for (const h of opts.allowedHosts ?? []) {
      const v = h.trim().toLowerCase();
      if (hostnameOf(v) === v) this.hostNames.add(bracket(v));
      else this.hostExact.add(v);
    }
    for (const o of opts.allowedOrigins ?? []) {
      const v = o.trim().toLowerCase().replace(/\/+$/, '');
      if (v.includes('://')) this.originExact.add(v);
      else this.originNames.add(bracket(v));
    }
    this.hostCheckOff = isWildcardHost(opts.listenHost) && (opts.allowedHosts?.length ?? 0) === 0;
  }

  check(host: string | undefined, origin: string | undefined): GuardVerdict {
    if (!this.hostCheckOff && host !== this.lastHostOk) {
      if (host === undefined) return { ok: false, detail: 'missing Host header' };
      const h = host.trim().toLowerCase();
      if (!this.hostExact.has(h) && !this.hostNames.has(hostnameOf(h)))
        return { ok: false, detail: `Host ${JSON.stringify(host)} is not allowed (see --allowed-host)` };
      this.lastHostOk = host;
    }
    if (origin === undefined) return OK;
    const o = origin.trim().toLowerCase();
    if (this.originExact.has(o)) return OK;
    let name: string;
    try {
      name = bracket(new URL(o).hostname);
    } catch {
      return { ok: false, detail: `Origin ${JSON.stringify(origin)} is not a valid origin` };
    }
    return this.originNames.has(name) ? OK : { ok: false, detail: `Origin ${JSON.stringify(origin)} is not allowed (see --allowed-origin)` };
  }
}
