/**
 * The web explorer's access check, as Jupyter's: a random token in the URL the command prints; its
 * first use sets an HttpOnly SameSite=Strict cookie and redirects to the bare URL (the token leaves
 * the address bar and history). Every other request needs the cookie: none is 401, a wrong one 403.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The cookie's name on a port: cookies ignore ports, so two explorers on one host must not share a name. */
export function cookieName(port: number): string {
  return `mcptap_ui_${port}`;
}

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The value of cookie `name` in a Cookie header, if any. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * True when the request may go on; otherwise it was answered (a redirect that sets the cookie `name`,
 * 401 or 403). `url` is the request's parsed URL.
 */
export function checkAccess(token: string, name: string, req: IncomingMessage, res: ServerResponse, url: URL): boolean {
  const given = url.searchParams.get('token');
  if (given !== null) {
    if (!same(given, token)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden: wrong token\n');
      return false;
    }
    url.searchParams.delete('token');
    const rest = url.searchParams.toString();
    res
      .writeHead(302, {
        'set-cookie': `${name}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        // One leading slash: a path such as //host would send the browser to another host.
        location: `/${url.pathname.replace(/^[/\\]+/, '')}${rest ? `?${rest}` : ''}`,
        'cache-control': 'no-store',
      })
      .end();
    return false;
  }
  const cookie = cookieValue(req.headers.cookie, name);
  if (cookie === undefined) {
    res.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized: open the URL with the token that `mcptap ui` printed\n');
    return false;
  }
  if (!same(cookie, token)) {
    res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden: a stale or wrong cookie; open the URL with the token that `mcptap ui` printed\n');
    return false;
  }
  return true;
}
