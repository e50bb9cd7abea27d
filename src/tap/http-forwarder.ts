/**
 * Forwards one HTTP request to the upstream and streams the answer back, chunk by chunk, with
 * backpressure both ways; the side path ({@link RequestObservation}) sees every chunk after it was
 * forwarded. An undici dispatch handler: no buffering, no body parsing, no per-chunk allocation.
 *
 * Failure rules:
 * - the client closes its connection -> the upstream request is aborted at once; recorded `cancelled`;
 * - the upstream fails before answering -> 502 (504 for timeouts) with a JSON-RPC error body;
 *   after answering began -> the client's response is cut (it sees a broken stream); both recorded
 *   as `transport_error` with the class;
 * - the request body passes --max-body -> 413, upstream request aborted.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Clock } from '../util/clock.js';
import { connectionTokens, isHopByHop } from '../protocol/headers.js';
import { RequestBodyPump, BodyTooLargeError } from './request-body.js';
import type { RequestObservation } from './request-observation.js';
import { classifyUpstreamError, sendTapError, TAP_ERROR_CODE } from './upstream-failure.js';

export interface ForwardSettings {
  dispatcher: Dispatcher;
  clock: Clock;
  responseTimeoutMs: number;
  idleTimeoutMs: number;
  maxBodyBytes: number;
  /** Called once per forward when it is over (for the tap's in-flight set and counters). */
  onDone(f: Forwarder, outcome: 'ok' | 'client_gone' | 'upstream_failed' | 'too_large'): void;
}

class ClientGoneError extends Error {
  readonly code = 'MCPTAP_CLIENT_GONE';
}

export class Forwarder implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private pump: RequestBodyPump | undefined;
  private done = false;
  private clientGone = false;
  private paused = false;
  private eventStream = false;
  /** When the client disconnected (µs), for measuring how fast the upstream request was aborted. */
  clientGoneUs: number | undefined;

  constructor(
    private readonly s: ForwardSettings,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly obs: RequestObservation | undefined,
  ) {}

  start(): void {
    this.res.on('close', this.onClientClose);
    const method = this.req.method ?? 'GET';
    const hasBody = this.req.headers['content-length'] !== undefined ? this.req.headers['content-length'] !== '0' : this.req.headers['transfer-encoding'] !== undefined;
    if (hasBody) {
      this.pump = new RequestBodyPump(this.req, {
        chunk: (c) => this.obs?.requestChunk(c),
        end: (t) => this.obs?.requestEnd(t),
        tooLarge: () => this.tooLarge(),
      }, this.s.maxBodyBytes, this.s.clock);
      // The pump is destroyed by the upstream client on failure; its error is handled in onResponseError.
      this.pump.on('error', noop);
    }
    this.s.dispatcher.dispatch(
      {
        path: this.req.url ?? '/',
        method: method as Dispatcher.HttpMethod,
        headers: forwardRequestHeaders(this.req.rawHeaders, this.req.headers.connection),
        body: this.pump ?? null,
        headersTimeout: this.s.responseTimeoutMs,
        bodyTimeout: this.s.idleTimeoutMs,
      },
      this,
    );
  }

  /** Tap shutdown: abort the upstream request and cut the client's response. */
  shutdown(): void {
    if (this.done) return;
    this.fail(new Error('mcptap is shutting down'), 'tap_closed');
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.done) controller.abort(new ClientGoneError('client went away'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, statusMessage?: string): void {
    if (this.done) return;
    const t = this.s.clock.nowUs();
    this.controller = controller;
    const out = forwardResponseHeaders(headers);
    if (statusMessage) this.res.writeHead(statusCode, statusMessage, out);
    else this.res.writeHead(statusCode, out);
    // SSE: the client must see the headers now, not with the first event (which may be minutes away).
    const ct = headers['content-type'];
    this.eventStream = typeof ct === 'string' && ct.startsWith('text/event-stream');
    if (this.eventStream) this.res.flushHeaders();
    this.obs?.responseStart(statusCode, headers, t);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    const t = this.s.clock.nowUs();
    if (!this.res.write(chunk) && !this.paused) {
      this.paused = true;
      controller.pause();
      this.res.once('drain', this.onDrain);
    }
    // node:http corks the socket until the next tick; an SSE event leaves now, before the side path runs.
    if (this.eventStream && this.res.socket?.writableCorked) this.res.socket.uncork();
    this.obs?.responseChunk(chunk, t);
  }

  onResponseEnd(): void {
    if (this.done) return;
    this.done = true;
    this.res.end();
    this.obs?.responseEnd(this.s.clock.nowUs());
    this.s.onDone(this, 'ok');
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.done) return;
    if (err instanceof BodyTooLargeError || (err as { code?: unknown }).code === 'MCPTAP_BODY_TOO_LARGE') {
      this.tooLarge();
      return;
    }
    const f = classifyUpstreamError(err);
    this.fail(err, f.errorClass, f);
  }

  private fail(err: Error, errorClass: string, f = classifyUpstreamError(err)): void {
    this.done = true;
    const t = this.s.clock.nowUs();
    this.controller?.abort(err);
    if (this.res.headersSent) {
      this.res.destroy();
      this.obs?.finish(t, { kind: 'failed', errorClass });
      this.s.onDone(this, 'upstream_failed');
      return;
    }
    // Answer only once the request body is in: its id goes into the error, and the recording gets it.
    const answer = () => {
      this.obs?.finish(this.s.clock.nowUs(), { kind: 'failed', errorClass });
      sendTapError(this.res, errorClass === 'tap_closed' ? 503 : f.status, TAP_ERROR_CODE.upstream, errorClass === 'tap_closed' ? 'mcptap: shutting down' : f.message, this.obs?.requestId() ?? null);
      this.s.onDone(this, 'upstream_failed');
    };
    if (!this.pump || this.pump.ended || errorClass === 'tap_closed') answer();
    else {
      this.req.once('end', answer);
      this.pump.detach();
    }
  }

  private tooLarge(): void {
    if (this.done) return;
    this.done = true;
    const t = this.s.clock.nowUs();
    this.controller?.abort(new BodyTooLargeError(this.s.maxBodyBytes));
    const detail = `request body larger than --max-body (${this.s.maxBodyBytes} bytes): answered 413`;
    if (this.obs) this.obs.recordRejection(detail, t);
    if (this.res.headersSent) this.res.destroy();
    else {
      // The rest of the body is not read; closing the connection is the only way to stop the sender.
      this.res.setHeader('connection', 'close');
      sendTapError(this.res, 413, TAP_ERROR_CODE.rejected, `mcptap: ${detail}`);
    }
    this.s.onDone(this, 'too_large');
  }

  private readonly onDrain = (): void => {
    this.paused = false;
    this.controller?.resume();
  };

  private readonly onClientClose = (): void => {
    if (this.res.writableFinished || this.done) return;
    this.done = true;
    this.clientGone = true;
    const t = this.s.clock.nowUs();
    this.clientGoneUs = t;
    this.controller?.abort(new ClientGoneError('client closed the connection'));
    this.pump?.destroy();
    this.obs?.finish(t, { kind: 'cancelled' });
    this.s.onDone(this, 'client_gone');
  };
}

function noop(): void {}

/** The client's headers minus hop-by-hop ones, as a flat [name, value, …] list (duplicates kept). */
export function forwardRequestHeaders(raw: string[], connection: string | undefined): string[] {
  const listed = connectionTokens(connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (isHopByHop(name.toLowerCase(), listed)) continue;
    out.push(name, raw[i + 1]!);
  }
  return out;
}

/** The upstream's headers minus hop-by-hop ones (node:http sets its own framing). */
export function forwardResponseHeaders(h: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const listed = connectionTokens(h.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in h) {
    const v = h[name];
    if (v === undefined || isHopByHop(name, listed)) continue;
    out[name] = v;
  }
  return out;
}
