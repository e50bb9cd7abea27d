/**
 * One POST's response, read through undici's handler API (`dispatcher.dispatch`) rather than
 * `dispatcher.request()`: no response stream object, no async-iterator over it and no
 * AsyncResource per request. At load-test rates (tens of thousands of requests/s) that is about a
 * tenth of the client's CPU per request. Chunks are handed to a {@link BodyReader} as they arrive,
 * so SSE events are still parsed and timed one by one.
 *
 * Invariants: `done` settles exactly once; it rejects only with the error undici (or the caller's
 * abort signal) reported, and `headersUs` tells whether the headers had arrived by then.
 */
import type { Dispatcher } from 'undici';
import { classifyMessage, isRecord, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from '../model/jsonrpc.js';
import { SseDecoder } from '../parse/sse-decoder.js';
import type { Clock } from '../util/clock.js';
import type { CallResult, ViolationKind } from './call-result.js';

type Headers = Record<string, string | string[] | undefined>;

export class PostExchange implements Dispatcher.DispatchHandler {
  readonly done: Promise<void>;
  status = 0;
  headers: Record<string, string> = {};
  /** When the final (non-1xx) response headers arrived. */
  headersUs: number | undefined;
  private settle!: (err?: unknown) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private abortReason: Error | undefined;
  private removeAbortListener: (() => void) | undefined;

  constructor(
    readonly reader: BodyReader,
    private readonly clock: Clock,
    signal?: AbortSignal,
    private readonly onHeadersIn?: (status: number, timeUs: number) => void,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = (err) => {
        this.removeAbortListener?.();
        if (err === undefined) resolve();
        else reject(err);
      };
    });
    if (signal?.aborted) this.abortReason = reasonOf(signal);
    else if (signal) {
      const onAbort = () => this.abort(reasonOf(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      this.removeAbortListener = () => signal.removeEventListener('abort', onAbort);
    }
  }

  private abort(reason: Error): void {
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    if (statusCode < 200) return; // 1xx informational: the final response follows
    this.headersUs = this.clock.nowUs();
    this.status = statusCode;
    this.headers = flatHeaders(headers);
    this.reader.start(statusCode, this.headers['content-type'] ?? '');
    this.onHeadersIn?.(statusCode, this.headersUs);
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    try {
      this.reader.data(chunk);
    } catch (err) {
      this.abort(err instanceof Error ? err : new Error(String(err))); // e.g. an onMessage callback threw
    }
  }

  onResponseEnd(): void {
    try {
      this.reader.end();
      this.settle();
    } catch (err) {
      this.settle(err);
    }
  }

  onResponseError(_c: Dispatcher.DispatchController | undefined, err: Error): void {
    this.settle(err);
  }
}

function reasonOf(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

/** Lower-cased names, repeated headers joined. A plain loop: this runs once per request. */
export function flatHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function isBareError(v: unknown): v is Record<string, unknown> {
  return isRecord(v) && !('id' in v) && isRecord(v.error) && typeof v.error.code === 'number';
}

/** Reads one response body (JSON or SSE), pushed chunk by chunk, into messages; matches the response by id. */
export class BodyReader {
  private response: JsonRpcResponse | undefined;
  private responseUs: number | undefined;
  private readonly messages: JsonRpcMessage[] = [];
  private readonly violations: ViolationKind[] = [];
  private readonly eventTimes: number[] = [];
  private progressTimes: number[] | undefined;
  private contentType: CallResult['contentType'] = 'empty';
  private status = 0;
  private isJson = false;
  private decoder: SseDecoder | undefined;
  private readonly parts: Buffer[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly expectId: JsonRpcId | null,
    private readonly onMessage?: (m: JsonRpcMessage, t: number) => void,
  ) {}

  start(status: number, contentType: string): void {
    this.status = status;
    if (contentType.startsWith('text/event-stream')) {
      this.contentType = 'sse';
      this.decoder = new SseDecoder();
    } else this.isJson = contentType.startsWith('application/json');
  }

  data(chunk: Buffer): void {
    // The arrival time, read before decoding: every event of the chunk arrived now, not after the
    // events ahead of it in the chunk were decoded and parsed.
    if (this.decoder) this.onEvents(this.clock.nowUs(), this.decoder.push(chunk));
    else this.parts.push(chunk);
  }

  end(): void {
    if (this.decoder) return this.onEvents(this.clock.nowUs(), this.decoder.end());
    const body = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    if (body.length === 0) return;
    this.contentType = this.isJson ? 'json' : 'other';
    const ok = this.onText(body.toString('utf8'), this.clock.nowUs(), this.status < 400 || this.isJson);
    if (ok && !this.isJson && this.status < 400) this.violations.push('bad_content_type');
  }

  private onEvents(t: number, events: { data: string }[]): void {
    for (const ev of events) {
      if (ev.data === '') continue; // priming event (2025-11-25) or keep-alive: not an MCP message
      this.eventTimes.push(t);
      this.onText(ev.data, t, true);
    }
  }

  /** Parse one JSON text; returns false when it was not JSON. `report` decides whether that is a violation. */
  private onText(text: string, t: number, report: boolean): boolean {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (report) this.violations.push('bad_json');
      return false;
    }
    if (Array.isArray(value)) for (const v of value) this.onValue(v, t);
    else this.onValue(value, t);
    return true;
  }

  private onValue(v: unknown, t: number): void {
    let kind = classifyMessage(v);
    if (kind === 'malformed') {
      this.violations.push('not_jsonrpc');
      // An error object without `id` (some SDKs answer a bad session this way) is still an answer.
      if (!isBareError(v)) return;
      kind = 'response';
      v = { ...v, id: null };
    }
    const msg = v as JsonRpcMessage;
    this.onMessage?.(msg, t);
    if (kind === 'response' && this.response === undefined && this.matches(msg as JsonRpcResponse)) {
      this.response = msg as JsonRpcResponse;
      this.responseUs = t;
      return;
    }
    if (kind === 'response') this.violations.push('id_mismatch');
    else if ((msg as { method?: string }).method === 'notifications/progress') (this.progressTimes ??= []).push(t);
    this.messages.push(msg);
  }

  /** Same id verbatim; an error response may carry `null` when the server could not read the id. */
  private matches(r: JsonRpcResponse): boolean {
    if (this.expectId === null) return true;
    return r.id === this.expectId || (r.id === null && r.error !== undefined);
  }

  result(status: number, sentUs: number, headersUs: number, endUs: number): CallResult {
    if (this.response === undefined && this.expectId !== null && status < 400) this.violations.push('no_response');
    const r: CallResult = {
      messages: this.messages,
      httpStatus: status,
      contentType: this.contentType,
      violations: this.violations,
      timing: { sentUs, headersUs, endUs },
    };
    if (this.response) r.response = this.response;
    if (this.responseUs !== undefined) r.timing.responseUs = this.responseUs;
    if (this.eventTimes.length > 0) {
      r.timing.firstEventUs = this.eventTimes[0];
      r.timing.eventTimesUs = this.eventTimes;
    }
    if (this.progressTimes) r.timing.progressTimesUs = this.progressTimes;
    return r;
  }
}
