/**
 * Exchanges as compact JSON for a model's context: a row per exchange in a list, and one exchange
 * in detail with its frames (payloads cut at a limit, said where cut), timings, SSE event times,
 * progress, cancellation and anomalies. Times are milliseconds from the recording's or the exchange's start.
 */
import type { StoredAnomaly, StoredExchange, StoredFrame } from '../store/types.js';
import { listedOutcome } from '../report/exchange-view.js';

export interface DetailLimits {
  /** Characters of each frame's payload (default 2000). */
  maxChars?: number;
  /** Frames listed (default 50). */
  maxFrames?: number;
}

const ms = (us: number): number => Math.round(us) / 1000;

/** One line's worth: what a list of exchanges needs to pick one. */
export function compactExchange(e: StoredExchange, recordingStartUs: number): Record<string, unknown> {
  return {
    row: e.rowid,
    id: e.id,
    method: e.method,
    ...(e.target !== undefined ? { target: e.target } : {}),
    outcome: listedOutcome(e),
    ...(e.errorCode !== undefined ? { errorCode: e.errorCode } : {}),
    ...(e.latencyUs !== undefined ? { latencyMs: ms(e.latencyUs) } : {}),
    atMs: ms(e.startUs - recordingStartUs),
    connection: e.connectionId,
    ...(e.sessionId !== undefined ? { session: e.sessionId } : {}),
    ...(e.direction === 's2c' ? { direction: 's2c' } : {}),
    ...(e.progress.length > 0 ? { progress: e.progress.length } : {}),
    ...(e.transport?.eventTimesUs?.length ? { sseEvents: e.transport.eventTimesUs.length } : {}),
    ...(e.cancel ? { cancelledBy: e.cancel.by } : {}),
  };
}

/** One exchange whole: messages, timings, frames, SSE events, progress, anomalies. */
export function exchangeDetail(
  e: StoredExchange,
  frames: readonly StoredFrame[],
  anomalies: readonly StoredAnomaly[],
  limits: DetailLimits = {},
): Record<string, unknown> {
  const maxChars = limits.maxChars ?? 2000;
  const maxFrames = limits.maxFrames ?? 50;
  const t = e.transport;
  return {
    exchange: {
      row: e.rowid,
      key: e.key,
      id: e.id,
      method: e.method,
      ...(e.target !== undefined ? { target: e.target } : {}),
      outcome: listedOutcome(e),
      state: e.state,
      era: e.era,
      ...(e.protocolVersion ? { protocolVersion: e.protocolVersion } : {}),
      connection: e.connectionId,
      ...(e.sessionId !== undefined ? { session: e.sessionId } : {}),
      direction: e.direction,
      ...(e.errorCode !== undefined ? { errorCode: e.errorCode, errorMessage: e.errorMessage } : {}),
      ...(e.isError ? { isError: true } : {}),
      startedAt: new Date(Math.floor(e.startUs / 1000)).toISOString(),
    },
    timings: {
      ...(e.latencyUs !== undefined ? { latencyMs: ms(e.latencyUs) } : {}),
      ...(t?.responseHeadersUs !== undefined ? { responseHeadersMs: ms(t.responseHeadersUs - e.startUs) } : {}),
      ...(t?.firstEventUs !== undefined ? { firstEventMs: ms(t.firstEventUs - e.startUs) } : {}),
      ...(t?.streamEndUs !== undefined ? { streamEndMs: ms(t.streamEndUs - e.startUs) } : {}),
      ...(t?.httpStatus !== undefined ? { httpStatus: t.httpStatus } : {}),
      ...(t?.errorClass ? { transportError: t.errorClass } : {}),
    },
    ...(t?.eventTimesUs?.length ? { sseEventsMs: t.eventTimesUs.map((u) => ms(u - e.startUs)) } : {}),
    ...(e.progress.length
      ? { progress: e.progress.map((p) => ({ atMs: ms(p.timeUs - e.startUs), progress: p.progress, total: p.total, message: p.message })) }
      : {}),
    ...(e.cancel
      ? { cancel: { atMs: ms(e.cancel.timeUs - e.startUs), by: e.cancel.by, reason: e.cancel.reason, responseAfterCancel: e.responseAfterCancel } }
      : {}),
    request: cut(JSON.stringify(e.request), maxChars),
    ...(e.response !== undefined ? { response: cut(JSON.stringify(e.response), maxChars) } : {}),
    frames: frames.slice(0, maxFrames).map((f) => ({
      seq: f.seq,
      atMs: ms(f.timeUs - e.startUs),
      direction: f.direction,
      channel: f.channel,
      kind: f.kind,
      ...(f.context?.httpStatus !== undefined ? { httpStatus: f.context.httpStatus } : {}),
      ...(f.context?.sseEventId ? { sseEventId: f.context.sseEventId } : {}),
      ...(f.context?.headers ? { headers: f.context.headers } : {}),
      payload: cut(f.raw.toString('utf8'), maxChars),
    })),
    ...(frames.length > maxFrames ? { framesMore: frames.length - maxFrames } : {}),
    anomalies: anomalies.map((a) => ({ kind: a.kind, atMs: ms(a.timeUs - e.startUs), detail: a.detail })),
  };
}

/** The text, or its first `max` characters with how many were left out. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters; raise maxChars for all)`;
}
