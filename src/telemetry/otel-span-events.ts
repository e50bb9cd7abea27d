/**
 * Span events of an exchange at their observed times: progress notifications, SSE events and the stream's end, the cancellation and a response after
 * it. Named `mcptap.*`: semconv defines no MCP span events and asks applications not to add names under `mcp.*`.
 */
import type { Attributes, HrTime } from '@opentelemetry/api';
import type { Exchange } from '../model/exchange.js';
import { usToHrTime } from './otel-attributes.js';

export const MCPTAP_EVENT = {
  progress: 'mcptap.progress',
  progressValue: 'mcptap.progress.progress',
  progressTotal: 'mcptap.progress.total',
  progressMessage: 'mcptap.progress.message',
  sseEvent: 'mcptap.sse.event',
  sseEventIndex: 'mcptap.sse.event.index',
  sseStreamEnd: 'mcptap.sse.stream_end',
  cancelled: 'mcptap.cancelled',
  cancelBy: 'mcptap.cancel.by',
  cancelReason: 'mcptap.cancel.reason',
  cancelMechanism: 'mcptap.cancel.mechanism',
  cancelProgressAfter: 'mcptap.cancel.progress_after',
  cancelWorkAfter: 'mcptap.cancel.work_after_ms',
  cancelStreamEndAfter: 'mcptap.cancel.stream_end_after_ms',
  responseAfterCancel: 'mcptap.response_after_cancel',
} as const;

/** SSE events recorded per span; the total is always in `mcptap.sse.events`. */
export const MAX_SSE_SPAN_EVENTS = 256;

export interface SpanEventData {
  name: string;
  attributes: Attributes;
  time: HrTime;
}

/** The exchange's span events, in the order they are added to its span. */
export function exchangeEvents(ex: Exchange): SpanEventData[] {
  const events: SpanEventData[] = [];
  const add = (name: string, attributes: Attributes, us: number) => events.push({ name, attributes, time: usToHrTime(us) });
  for (const p of ex.progress) {
    const attrs: Attributes = { [MCPTAP_EVENT.progressValue]: p.progress };
    if (p.total !== undefined) attrs[MCPTAP_EVENT.progressTotal] = p.total;
    if (p.message !== undefined) attrs[MCPTAP_EVENT.progressMessage] = p.message;
    add(MCPTAP_EVENT.progress, attrs, p.timeUs);
  }
  const sse = ex.transport?.eventTimesUs;
  const n = sse ? Math.min(sse.length, MAX_SSE_SPAN_EVENTS) : 0;
  for (let i = 0; i < n; i++) add(MCPTAP_EVENT.sseEvent, { [MCPTAP_EVENT.sseEventIndex]: i }, sse![i]!);
  // An SSE stream's end, or a stream that ended unanswered; a JSON body's end is its response, which the span's end time says.
  const t = ex.transport;
  if (t?.streamEndUs !== undefined && (t.eventTimesUs !== undefined || ex.response === undefined)) add(MCPTAP_EVENT.sseStreamEnd, {}, t.streamEndUs);
  if (ex.cancel) {
    const attrs: Attributes = { [MCPTAP_EVENT.cancelBy]: ex.cancel.by };
    if (ex.cancel.reason !== undefined) attrs[MCPTAP_EVENT.cancelReason] = ex.cancel.reason;
    const a = ex.transport?.afterCancel;
    if (a) {
      attrs[MCPTAP_EVENT.cancelMechanism] = a.mechanism;
      attrs[MCPTAP_EVENT.cancelProgressAfter] = a.progressAfter;
      attrs[MCPTAP_EVENT.cancelWorkAfter] = a.workAfterUs / 1000;
      if (a.streamEndAfterUs !== undefined) attrs[MCPTAP_EVENT.cancelStreamEndAfter] = a.streamEndAfterUs / 1000;
    }
    add(MCPTAP_EVENT.cancelled, attrs, ex.cancel.timeUs);
  }
  if (ex.responseAfterCancel) {
    add(MCPTAP_EVENT.responseAfterCancel, {}, ex.endUs ?? ex.cancel?.timeUs ?? ex.startUs);
  }
  return events;
}
