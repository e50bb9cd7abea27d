/**
 * What a tap stores under its recording's `meta.otel` so `mcptap export` rebuilds the spans with the live ids: the span-id seed and whether it injected
 * trace context. Older recordings have none; export then derives a seed from the recording (stable across exports, but not the live ids).
 */
import { isRecord } from '../model/jsonrpc.js';

export interface RecordingOtelMeta {
  spanIdSeed: string;
  /** The forwarded (and recorded) c2s requests carry the tap's span context in `_meta.traceparent`. */
  traceContextInjected: boolean;
}

/** The `meta` object to store with a new recording. */
export function recordingOtelMeta(m: RecordingOtelMeta): Record<string, unknown> {
  return { otel: { spanIdSeed: m.spanIdSeed, traceContextInjected: m.traceContextInjected } };
}

/** Read it back; undefined when the recording has none (or it is malformed). */
export function readRecordingOtelMeta(meta: Record<string, unknown> | undefined): RecordingOtelMeta | undefined {
  const otel = meta?.otel;
  if (!isRecord(otel) || typeof otel.spanIdSeed !== 'string' || otel.spanIdSeed === '') return undefined;
  return { spanIdSeed: otel.spanIdSeed, traceContextInjected: otel.traceContextInjected === true };
}
