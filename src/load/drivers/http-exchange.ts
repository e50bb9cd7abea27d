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

/**
 * POST `text` with `headers` (flat name/value list), sent at `sentUs` (the caller's clock read,
 * taken just before); resolves with the answer, rejects with what undici reported.
 */
export function postText(e: HttpEndpoint, text: string, headers: string[], id: number, sentUs: number): Promise<CallResult> {
  return new Promise<CallResult>((resolve, reject) => {
    const ex = new LoadExchange(e, id, resolve, reject);
    e.deadlines.add(ex, e.timeoutMs, sentUs);
    ex.sentUs = sentUs;
    e.dispatcher.dispatch(
      // undici's own timers off: the deadline above covers the whole exchange.
      { origin: e.origin, path: e.path, method: 'POST', headers, body: text, headersTimeout: 0, bodyTimeout: 0 },
      ex,
    );
  });
}

/** `content-type` as bytes, to find it among the raw response headers without decoding every name. */
const CONTENT_TYPE = Buffer.from('content-type', 'latin1');

function isContentType(name: Buffer | string): boolean {
  if (typeof name === 'string') return name.toLowerCase() === 'content-type';
  if (name.length !== CONTENT_TYPE.length) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if ((c >= 0x41 && c <= 0x5a ? c | 0x20 : c) !== CONTENT_TYPE[i]) return false;
  }
  return true;
}

/** The `content-type` of raw headers as undici's `parseHeaders` gives it (repeated ones joined). */
export function rawContentType(raw: readonly (Buffer | string)[]): string {
  let out: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!isContentType(raw[i]!)) continue;
    const v = raw[i + 1]!;
    const text = typeof v === 'string' ? v : v.toString('latin1');
    out = out === undefined ? text : `${out}, ${text}`;
  }
  return out ?? '';
}

/**
 * undici's core calls handlers by the callbacks below (onConnect, onHeaders, onData, onComplete,
 * onError); a handler of the newer shape (onRequestStart …) is wrapped per request in two objects
 * and gets its headers as an object parsed from the raw ones. This one takes the raw headers and
 * reads `content-type` only (docs/performance.md: a few % of the driver's CPU).
 */
class LoadExchange implements Dispatcher.DispatchHandler, Deadline {
  deadlineUs = 0;
  prevDeadline: Deadline | undefined = undefined;
  nextDeadline: Deadline | undefined = undefined;
  armed = false;
  sentUs = 0;
  private abort: ((err?: Error) => void) | undefined = undefined;
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
    this.abort?.(this.timedOut);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.timedOut) abort(this.timedOut);
  }

  onHeaders(statusCode: number, raw: Buffer[], _resume: () => void, _statusText: string): boolean {
    if (statusCode < 200) return true; // 1xx informational: the final response follows
    this.headersUs = this.e.clock.nowUs();
    this.status = statusCode;
    this.contentType = rawContentType(raw);
    if (!this.contentType.startsWith('application/json')) this.reader = this.newReader();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.reader) this.reader.data(chunk);
    else (this.parts ??= []).push(chunk);
    return true;
  }

  onComplete(_trailers: string[] | null): void {
    this.e.deadlines.remove(this);
    try {
      this.resolve(this.result());
    } catch (err) {
      this.reject(err);
    }
  }

  onError(err: Error): void {
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
