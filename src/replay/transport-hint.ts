/**
 * Why an HTTP target refused the request that opens a session, when the status says it: a server on
 * the deprecated HTTP+SSE transport (GET /sse, then POSTs to the endpoint it names) answers a POST
 * to its /sse with 404 or 405. Pure.
 */

/** Methods a replay opens a session with: a refusal of these is about the endpoint, not the session. */
const OPENING = new Set(['initialize', 'server/discover']);

export function httpStatusHint(method: string, status: number): string {
  if (!OPENING.has(method) || (status !== 404 && status !== 405)) return '';
  return (
    ': mcptap replays over Streamable HTTP (POSTs to one endpoint, often /mcp); a server on the older HTTP+SSE transport ' +
    '(GET /sse) answers a POST with 404 or 405: give its Streamable HTTP endpoint, or replay over stdio'
  );
}
