/**
 * The reference server's Node side of HTTP: what `toNodeHandler` from `@modelcontextprotocol/node`
 * does, without its per-request stream conversions. The body is read once from the Node stream and
 * parsed once; the SDK gets the parsed value (its documented `parsedBody` path), so neither
 * `isLegacyRequest` nor `createMcpHandler` clones the `Request` and reads it again. A JSON answer
 * goes out with one `end()`; an SSE answer is streamed with backpressure, its headers flushed at
 * once (a legacy GET stream has no first byte until an event, and clients wait for the 200).
 *
 * Same answers as `toNodeHandler`: 413 over the body limit (checked on `content-length` first),
 * 500 with the request's id when the handler throws, the `Request`'s signal aborted when the
 * client goes away before the answer is complete (how a closed 2026-07-28 stream cancels).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The SDK's default request-body bound (4 MiB), as `toNodeHandler` applies it. */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;

/**
 * One request for the dispatcher: the web `Request` (no body unless `withBody()` is asked for) and
 * the JSON body parsed, `undefined` when it was empty or not JSON.
 */
export interface AdaptedRequest {
  request: Request;
  parsedBody: unknown;
  /** The same request with its body text, for handlers that read the body themselves. */
  withBody(): Request;
}

export type AdaptedFetch = (r: AdaptedRequest) => Promise<Response>;

export function nodeFetchAdapter(fetch: AdaptedFetch, onerror: (err: Error) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    serve(fetch, onerror, req, res).catch((err: unknown) => {
      report(onerror, err);
      res.destroy();
    });
  };
}

function report(onerror: (err: Error) => void, err: unknown): void {
  try {
    onerror(err instanceof Error ? err : new Error(String(err)));
  } catch {
    // reporting only
  }
}

async function serve(fetch: AdaptedFetch, onerror: (err: Error) => void, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let finished = false;
  const abort = new AbortController();
  res.on('close', () => {
    if (!finished) abort.abort();
  });
  if (res.destroyed) abort.abort();
  let response: Response;
  let parsedBody: unknown;
  try {
    const method = (req.method ?? 'GET').toUpperCase();
    const text = method === 'GET' || method === 'HEAD' ? undefined : await readBody(req);
    if (text === TOO_LARGE) {
      response = Response.json(
        { jsonrpc: '2.0', error: { code: -32000, message: `Payload Too Large: Request body must not exceed ${MAX_REQUEST_BODY_BYTES} bytes` }, id: null },
        { status: 413, headers: { connection: 'close' } },
      );
    } else {
      parsedBody = parseJson(text);
      const url = `http://${one(req.headers.host) ?? 'localhost'}${req.url ?? '/'}`;
      const headers = webHeaders(req);
      const request = new Request(url, { method, headers, signal: abort.signal });
      const withBody = () => (text ? new Request(url, { method, headers, signal: abort.signal, body: text }) : request);
      response = await fetch({ request, parsedBody, withBody });
    }
  } catch (err) {
    report(onerror, err);
    response = Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: echoableId(parsedBody) }, { status: 500 });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  if (response.body === null) {
    finished = true;
    res.end();
    return;
  }
  if (!/^text\/event-stream/i.test(headers['content-type'] ?? '')) {
    let bytes: Buffer | undefined;
    try {
      bytes = Buffer.from(await response.arrayBuffer());
    } catch {
      // the body failed (or was cancelled): end what was sent, as a failed stream does below
    }
    finished = true;
    res.end(bytes);
    return;
  }
  res.flushHeaders();
  await streamBody(response.body, res, abort.signal);
  finished = true;
  res.end();
}

/** Writes an SSE body as it comes, waiting for `drain` when the socket is full; stops on abort. */
async function streamBody(body: ReadableStream<Uint8Array>, res: ServerResponse, signal: AbortSignal): Promise<void> {
  let drained: (() => void) | undefined;
  const release = () => {
    drained?.();
    drained = undefined;
  };
  res.on('drain', release);
  const closed = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  try {
    for await (const chunk of body) {
      if (signal.aborted) break;
      if (!res.write(chunk)) await Promise.race([new Promise<void>((resolve) => (drained = resolve)), closed]);
    }
  } catch {
    // the stream failed or was cancelled: end what was sent
  } finally {
    res.off('drain', release);
  }
}

const TOO_LARGE = Symbol('too large');

/** The body as text (UTF-8, a BOM dropped as `TextDecoder` does), or TOO_LARGE past the limit. */
function readBody(req: IncomingMessage): Promise<string | typeof TOO_LARGE> {
  if (Number(one(req.headers['content-length'])) > MAX_REQUEST_BODY_BYTES) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_REQUEST_BODY_BYTES) {
        req.off('data', onData);
        req.resume();
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('error', reject);
    req.once('end', () => {
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
  });
}

function parseJson(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Node's headers as web `Headers`, pseudo-headers left out (what `toWebRequest` builds). */
function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return headers;
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function echoableId(body: unknown): string | number | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  if (typeof method !== 'string') return null;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
