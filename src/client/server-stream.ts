/**
 * A legacy HTTP session's standalone GET stream, held open from `initialized` on as the SDK 1.x
 * clients hold it: a server sends the requests that belong to no client request there (the SDK
 * sends `roots/list` that way), and drops them when no stream is open. Each such request is
 * answered by `answer` and POSTed back; every message also goes to `onMessage`.
 * A server without the stream (405) or one that ends it is left be: nothing is retried.
 */
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../model/jsonrpc.js';
import type { McpSession } from './mcp-session.js';

export interface ServerStreamOptions {
  /** What to answer a server request (called once per request). */
  answer: (req: JsonRpcRequest) => JsonRpcResponse;
  onMessage?: (m: JsonRpcMessage, timeUs: number) => void;
  /** How long {@link HeldServerStream.opened} waits for the stream's headers at most, ms. */
  openTimeoutMs: number;
}

export interface HeldServerStream {
  /**
   * Settles when the stream's headers arrived, it failed, or `openTimeoutMs` passed: a server
   * drops what it sends before the stream is open, so a client waits for it before going on.
   */
  readonly opened: Promise<void>;
  /** Closes the stream (idempotent); resolves once it has ended. */
  close(): Promise<void>;
}

/** How long the stream may stay open at most: the session's life, bounded (a day). */
const HOLD_MS = 24 * 3600_000;

/** Opens the session's GET stream (legacy HTTP sessions only; anything else gets a no-op). */
export function holdServerStream(session: McpSession, opts: ServerStreamOptions): HeldServerStream {
  const stream = session.channel.stream;
  if (session.era !== 'legacy' || session.channel.transport !== 'http' || !stream || !session.isInitialized)
    return { opened: Promise.resolve(), close: async () => {} };
  const stop = new AbortController();
  const ctx = session.headerContext;
  // A refusal's body (405 with a JSON-RPC error of id null, as SDK servers answer) is no stream traffic.
  let refused = false;
  const onMessage = (m: JsonRpcMessage, t: number): void => {
    if (refused) return;
    opts.onMessage?.(m, t);
    if ('method' in m && 'id' in m) void session.channel.respond?.(opts.answer(m as JsonRpcRequest), ctx).catch(() => undefined);
  };
  let timer: NodeJS.Timeout | undefined;
  let isOpen: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    isOpen = resolve;
    timer = setTimeout(resolve, opts.openTimeoutMs);
  }).finally(() => clearTimeout(timer));
  const ended = stream
    .call(session.channel, ctx, { signal: stop.signal, timeoutMs: HOLD_MS, onMessage, onHeaders: (status) => ((refused = status >= 300), isOpen()) })
    .then(() => undefined)
    .catch(() => undefined) // aborted at close, refused or cut: the session goes on without it
    .finally(() => isOpen());
  return {
    opened,
    close: async () => {
      stop.abort();
      await ended;
    },
  };
}
