/**
 * What a tap stores in its recording's `meta` so `mcptap export` can rebuild the spans the live
 * tap exported with the same ids: the span-id seed and whether the tap rewrote host->server
 * requests with its own trace context (`--inject-trace-context`).
 *
 * Stored under `meta.otel`; recordings made before this existed have none and export derives a
 * seed from the recording itself (stable across exports, but not the live ids).
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
