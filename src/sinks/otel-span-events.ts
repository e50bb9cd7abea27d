/**
 * Span events of an exchange, all at their observed times: each progress notification
 * (`mcp.progress`), each SSE event on the request's stream (`sse.event`), the end of that stream,
 * the cancellation (`mcp.cancelled`) and a response that still arrived after it.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { Exchange } from '../model/exchange.js';
import { usToHrTime } from './otel-attributes.js';

/** SSE events recorded per span; the total is always in `mcptap.sse.events`. */
export const MAX_SSE_SPAN_EVENTS = 256;

export function addExchangeEvents(span: Span, ex: Exchange): void {
  for (const p of ex.progress) {
    const attrs: Attributes = { 'mcp.progress.progress': p.progress };
    if (p.total !== undefined) attrs['mcp.progress.total'] = p.total;
    if (p.message !== undefined) attrs['mcp.progress.message'] = p.message;
    span.addEvent('mcp.progress', attrs, usToHrTime(p.timeUs));
  }
  const sse = ex.transport?.eventTimesUs;
  const n = sse ? Math.min(sse.length, MAX_SSE_SPAN_EVENTS) : 0;
  for (let i = 0; i < n; i++) span.addEvent('sse.event', { 'sse.event.index': i }, usToHrTime(sse![i]!));
  // An SSE stream's end, or a stream that ended unanswered; a JSON body's end is its response (the
  // HTTP tap notes it on every body), which the span's end time already says.
  const t = ex.transport;
  if (t?.streamEndUs !== undefined && (t.eventTimesUs !== undefined || ex.response === undefined)) span.addEvent('sse.stream_end', {}, usToHrTime(t.streamEndUs));
  if (ex.cancel) {
    const attrs: Attributes = { 'mcp.cancel.by': ex.cancel.by };
    if (ex.cancel.reason !== undefined) attrs['mcp.cancel.reason'] = ex.cancel.reason;
    span.addEvent('mcp.cancelled', attrs, usToHrTime(ex.cancel.timeUs));
  }
  if (ex.responseAfterCancel) {
    span.addEvent('mcp.response_after_cancel', {}, usToHrTime(ex.endUs ?? ex.cancel?.timeUs ?? ex.startUs));
  }
}
