/**
 * One load request over HTTP: undici's `dispatch` with this handler, which reads the answer
 * itself. Compared with the general client (src/client/post-exchange.ts): no AbortSignal and no
 * timer per request (the deadline is an entry of the driver's {@link DeadlineList}), headers and
 * body come pre-built (request-shapes.ts), and a JSON answer that is one response with the
 * expected id is parsed once into the call result. Anything else (SSE, an empty or odd body, a
 * batch, a foreign id) is handed to the general {@link BodyReader}, so every count and time is
 * what the general client reports.
 */
import type { Dispatcher } from 'undici';
import type { CallResult } from '../../client/call-result.js';
import { BodyReader } from '../../client/post-exchange.js';
import { classifyMessage, type JsonRpcResponse } from '../../model/jsonrpc.js';
import type { Clock } from '../../util/clock.js';
import type { Deadline, DeadlineList } from '../../util/deadlines.js';

export interface HttpEndpoint {
  dispatcher: Dispatcher;
  origin: string;
  path: string;
  timeoutMs: number;
  deadlines: DeadlineList;
  clock: Clock;
}

/** POST `text` with `headers` (flat name/value list); resolves with the answer, rejects with what undici reported. */
export function postText(e: HttpEndpoint, text: string, headers: string[], id: number): Promise<CallResult> {
  return new Promise<CallResult>((resolve, reject) => {
    const ex = new LoadExchange(e, id, resolve, reject);
    e.deadlines.add(ex, e.timeoutMs);
    ex.sentUs = e.clock.nowUs();
    e.dispatcher.dispatch(
      // undici's own timers off: the deadline above covers the whole exchange.
      { origin: e.origin, path: e.path, method: 'POST', headers, body: text, headersTimeout: 0, bodyTimeout: 0 },
      ex,
    );
  });
}

class LoadExchange implements Dispatcher.DispatchHandler, Deadline {
  deadlineUs = 0;
  prevDeadline: Deadline | undefined = undefined;
  nextDeadline: Deadline | undefined = undefined;
  armed = false;
  sentUs = 0;
  private controller: Dispatcher.DispatchController | undefined = undefined;
  private timedOut: Error | undefined = undefined;
  private status = 0;
  private headersUs = 0;
  private contentType = '';
  /** The body of a JSON answer, chunk by chunk; unused once `reader` reads it. */
  private parts: Buffer[] | undefined = undefined;
  private reader: BodyReader | undefined = undefined;

  constructor(
    private readonly e: HttpEndpoint,
    private readonly id: number,
    private readonly resolve: (r: CallResult) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  expire(): void {
    // What AbortSignal.timeout() reports: classified as a `timeout` like before.
    this.timedOut = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    this.controller?.abort(this.timedOut);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) controller.abort(this.timedOut);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return; // 1xx informational: the final response follows
    this.headersUs = this.e.clock.nowUs();
    this.status = statusCode;
    const ct = headers['content-type'];
    this.contentType = ct === undefined ? '' : Array.isArray(ct) ? ct.join(', ') : ct;
    if (!this.contentType.startsWith('application/json')) this.reader = this.newReader();
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.reader) this.reader.data(chunk);
    else (this.parts ??= []).push(chunk);
  }

  onResponseEnd(): void {
    this.e.deadlines.remove(this);
    try {
      this.resolve(this.result());
    } catch (err) {
      this.reject(err);
    }
  }

  onResponseError(_c: Dispatcher.DispatchController | undefined, err: Error): void {
    this.e.deadlines.remove(this);
    this.reject(err);
  }

  private result(): CallResult {
    const t = this.e.clock.nowUs();
    if (!this.reader) {
      const p = this.parts;
      const body = p === undefined ? undefined : p.length === 1 ? p[0]! : Buffer.concat(p);
      const fast = body && this.single(body.toString('utf8'), t);
      if (fast) return fast;
      const r = this.newReader();
      if (body) r.data(body);
      this.reader = r;
    }
    this.reader.end();
    return this.reader.result(this.status, this.sentUs, this.headersUs, this.e.clock.nowUs());
  }

  /** The common answer: one JSON-RPC response with our id. Undefined for anything else. */
  private single(text: string, t: number): CallResult | undefined {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (Array.isArray(v) || classifyMessage(v) !== 'response' || (v as JsonRpcResponse).id !== this.id) return undefined;
    return {
      response: v as JsonRpcResponse,
      messages: [],
      httpStatus: this.status,
      contentType: 'json',
      violations: [],
      timing: { sentUs: this.sentUs, headersUs: this.headersUs, responseUs: t, endUs: t },
    };
  }

  private newReader(): BodyReader {
    const r = new BodyReader(this.e.clock, this.id);
    r.start(this.status, this.contentType);
    return r;
  }
}
