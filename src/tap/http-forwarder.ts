/**
 * Forwards one HTTP request to the upstream and streams the answer back, chunk by chunk, with
 * backpressure both ways; the side path ({@link RequestObservation}) sees every chunk after it was
 * forwarded. An undici dispatch handler: no body parsing, no per-chunk allocation.
 *
 * Cost per request matters here (this thread forwards everything):
 * - a request body that node:http has already read in full when the request is forwarded (a small
 *   POST usually arrives with its headers) goes to undici as one Buffer, written with the headers
 *   at once: no stream wrapper, listeners or extra ticks (some 15% of this thread's CPU per
 *   request at saturation). A body still arriving is streamed (RequestBodyPump); nothing waits for
 *   bytes to buffer them.
 * - the side path of a plain (non-SSE) response runs after the response went out: its start and
 *   first chunk are observed at its end, or at its next chunk, whichever comes first. SSE responses
 *   are observed as they flow (each event is stamped when it arrived).
 *
 * Failure rules:
 * - the client closes its connection -> the upstream request is aborted at once; recorded `cancelled`;
 * - the upstream fails before answering -> 502 (504 for timeouts) with a JSON-RPC error body;
 *   after answering began -> the client's response is cut (it sees a broken stream); both recorded
 *   as `transport_error` with the class;
 * - the request body passes --max-body -> 413, upstream request aborted.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import type { Clock } from '../util/clock.js';
import { connectionTokens, isHopByHop } from '../protocol/headers.js';
import { RequestBodyPump, BodyTooLargeError, type BodyHooks } from './request-body.js';
import type { RequestObservation } from './request-observation.js';
import { classifyUpstreamError, sendTapError, TAP_ERROR_CODE, type UpstreamHealth } from './upstream-failure.js';

export interface ForwardSettings {
  dispatcher: Dispatcher;
  clock: Clock;
  responseTimeoutMs: number;
  idleTimeoutMs: number;
  maxBodyBytes: number;
  /** Told of each upstream failure and answer (says on stderr when the upstream fails, and recovers). */
  health: UpstreamHealth;
  /** Called once per forward when it is over (for the tap's in-flight set and counters). */
  onDone(f: Forwarder, outcome: 'ok' | 'client_gone' | 'upstream_failed' | 'too_large'): void;
}

class ClientGoneError extends Error {
  readonly code = 'MCPTAP_CLIENT_GONE';
}

const EMPTY = Buffer.alloc(0);
/** What node:http accepts in a reason phrase (its header-value rule). */
const SENDABLE_REASON = /^[\t\x20-\x7e\x80-\xff]*$/;

export class Forwarder implements Dispatcher.DispatchHandler, BodyHooks {
  private controller: Dispatcher.DispatchController | undefined;
  private pump: RequestBodyPump | undefined;
  /** The whole request body was read (or there is none): an error answer need not wait for it. */
  private bodyIn = true;
  private done = false;
  private paused = false;
  private eventStream = false;
  /** The declared request body length (-1: chunked). */
  private bodyLength = -1;
  /** A plain response whose start (and first chunk) the side path has not seen yet: observed after forwarding. */
  private startHeld = false;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> | undefined;
  private headersUs = 0;
  private heldChunk: Buffer | undefined;
  /** The client's socket, while this request's response is queued behind others on it (pipelining). */
  private queuedOn: Socket | undefined;
  /** When the client disconnected (µs), for measuring how fast the upstream request was aborted. */
  clientGoneUs: number | undefined;

  constructor(
    private readonly s: ForwardSettings,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly obs: RequestObservation | undefined,
  ) {}

  /** A GET: the stream a server keeps open for messages of its own, which never ends by itself. */
  get isServerStream(): boolean {
    return this.req.method === 'GET';
  }

  start(): void {
    this.res.on('close', this.onClientClose);
    // A pipelined request's response waits its turn off the socket, and gets no 'close' if the
    // client leaves first: the socket's own close says so (else its upstream request would stay).
    if (!this.res.socket) {
      this.queuedOn = this.req.socket;
      this.queuedOn.once('close', this.onClientClose);
    }
    const h = this.req.headers;
    const cl = h['content-length'];
    if (cl !== undefined ? cl === '0' : h['transfer-encoding'] === undefined) return this.dispatch(null);
    this.bodyIn = false;
    this.bodyLength = cl !== undefined ? Number(cl) : -1;
    // node:http emits 'request' once the headers are parsed, before it pushes the body bytes of the
    // same read: on the next tick that read is fully parsed, and nothing can have arrived since.
    process.nextTick(takeBody, this);
  }

  /** (Next tick after start.) Forward the body: as one Buffer when it is all here, else as a stream. */
  takeBody(): void {
    if (this.done) return;
    const req = this.req;
    // All of it is buffered in `req` (with a declared length, node:http marks the message complete
    // only later, once its parser runs again: the byte count says it sooner).
    const have = req.readableLength;
    if ((have === this.bodyLength || req.complete) && have <= this.s.maxBodyBytes) {
      const body = (req.read() as Buffer | null) ?? EMPTY;
      this.bodyIn = true;
      // It came in the read that carried the headers: received when the request was.
      this.obs?.requestBody(body, this.obs.startUs);
      this.dispatch(body);
      this.obs?.requestForwarded();
      return;
    }
    this.pump = new RequestBodyPump(req, this, this.s.maxBodyBytes, this.s.clock);
    // The pump is destroyed by the upstream client on failure; its error is handled in onResponseError.
    this.pump.on('error', noop);
    this.dispatch(this.pump);
  }

  private dispatch(body: Buffer | RequestBodyPump | null): void {
    const req = this.req;
    this.s.dispatcher.dispatch(
      {
        path: req.url ?? '/',
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: forwardRequestHeaders(req.rawHeaders, req.headers.connection),
        body,
        headersTimeout: this.s.responseTimeoutMs,
        bodyTimeout: this.s.idleTimeoutMs,
      },
      this,
    );
  }

  // ---- BodyHooks (the streamed body) ----

  bodyChunk(chunk: Buffer): void {
    this.obs?.requestChunk(chunk);
  }

  bodyEnd(timeUs: number): void {
    this.bodyIn = true;
    this.obs?.requestEnd(timeUs);
  }

  bodyTooLarge(): void {
    this.tooLarge();
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

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    // 1xx (100 Continue, 103 Early Hints) is informational: the final response follows. Not relayed.
    if (this.done || statusCode < 200) return;
    const t = this.s.clock.nowUs();
    this.controller = controller;
    this.s.health.answered();
    const out = forwardResponseHeaders(headers);
    // A reason phrase node:http refuses to send (undici decodes bytes past ASCII to U+FFFD) is left out: the status stays.
    if (statusMessage && SENDABLE_REASON.test(statusMessage)) this.res.writeHead(statusCode, statusMessage, out);
    else this.res.writeHead(statusCode, out);
    // SSE: the client must see the headers now, not with the first event (which may be minutes away).
    const ct = headers['content-type'];
    this.eventStream = typeof ct === 'string' && ct.startsWith('text/event-stream');
    if (this.eventStream) {
      this.res.flushHeaders();
      this.obs?.responseStart(statusCode, headers, t);
    } else if (this.obs) {
      this.startHeld = true;
      this.status = statusCode;
      this.headers = headers;
      this.headersUs = t;
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    if (!this.res.write(chunk) && !this.paused) {
      this.paused = true;
      controller.pause();
      // A closure only under backpressure, not one per request.
      this.res.once('drain', () => this.onDrain());
    }
    if (this.eventStream) {
      const t = this.s.clock.nowUs();
      // node:http corks the socket until the next tick; an SSE event leaves now, before the side path runs.
      if (this.res.socket?.writableCorked) this.res.socket.uncork();
      this.obs?.responseChunk(chunk, t);
    } else if (this.startHeld && this.heldChunk === undefined) {
      // Usually the whole body: node:http sends it with the end, so observe it after that.
      this.heldChunk = chunk;
    } else {
      this.releaseStart();
      this.obs?.responseChunk(chunk);
    }
  }

  onResponseEnd(): void {
    if (this.done) return;
    this.done = true;
    this.res.end();
    if (this.obs) {
      const t = this.s.clock.nowUs();
      this.releaseStart();
      this.obs.responseEnd(t);
    }
    this.settle('ok');
  }

  /** Let the side path see the start of a plain response, and the chunk held with it. */
  private releaseStart(): void {
    if (!this.startHeld) return;
    this.startHeld = false;
    const obs = this.obs!;
    obs.responseStart(this.status, this.headers!, this.headersUs);
    this.headers = undefined;
    const c = this.heldChunk;
    if (c !== undefined) {
      this.heldChunk = undefined;
      obs.responseChunk(c);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.done) return;
    if (err instanceof BodyTooLargeError || (err as { code?: unknown }).code === 'MCPTAP_BODY_TOO_LARGE') {
      this.tooLarge();
      return;
    }
    const f = classifyUpstreamError(err);
    this.s.health.failed(f);
    this.fail(err, f.errorClass, f);
  }

  private fail(err: Error, errorClass: string, f = classifyUpstreamError(err)): void {
    this.done = true;
    const t = this.s.clock.nowUs();
    this.controller?.abort(err);
    this.releaseStart();
    if (this.res.headersSent) {
      this.res.destroy();
      this.obs?.finish(t, { kind: 'failed', errorClass });
      this.settle('upstream_failed');
      return;
    }
    // Answer only once the request body is in: its id goes into the error, and the recording gets it.
    const answer = () => {
      try {
        this.obs?.finish(this.s.clock.nowUs(), { kind: 'failed', errorClass });
        sendTapError(
          this.res,
          errorClass === 'tap_closed' ? 503 : f.status,
          TAP_ERROR_CODE.upstream,
          errorClass === 'tap_closed' ? 'mcptap: shutting down' : f.message,
          this.obs?.requestId() ?? null,
        );
      } catch {
        // The answer could not be written: the client must not wait for it.
        this.res.destroy();
      } finally {
        this.settle('upstream_failed');
      }
    };
    if (this.bodyIn || !this.pump || errorClass === 'tap_closed') answer();
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
    this.releaseStart();
    const detail = `request body larger than --max-body (${this.s.maxBodyBytes} bytes): answered 413`;
    if (this.obs) this.obs.recordRejection(detail, t);
    if (this.res.headersSent) this.res.destroy();
    else {
      // The rest of the body is not read; closing the connection is the only way to stop the sender.
      this.res.setHeader('connection', 'close');
      sendTapError(this.res, 413, TAP_ERROR_CODE.rejected, `mcptap: ${detail}`);
    }
    this.settle('too_large');
  }

  private settle(outcome: Parameters<ForwardSettings['onDone']>[1]): void {
    this.queuedOn?.off('close', this.onClientClose);
    this.s.onDone(this, outcome);
  }

  private onDrain(): void {
    this.paused = false;
    this.controller?.resume();
  }

  private readonly onClientClose = (): void => {
    if (this.res.writableFinished || this.done) return;
    this.done = true;
    const t = this.s.clock.nowUs();
    this.clientGoneUs = t;
    this.controller?.abort(new ClientGoneError('client closed the connection'));
    this.pump?.destroy();
    this.releaseStart();
    this.obs?.finish(t, { kind: 'cancelled' });
    this.settle('client_gone');
  };
}

function noop(): void {}

function takeBody(f: Forwarder): void {
  f.takeBody();
}

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
