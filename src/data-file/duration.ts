/**
 * Durations and rates as scenario files write them: `250ms`, `2s`, `1m`, `1.5s`, `500us`. A
 * duration carries its unit: a bare number (`30`, `"30"`) is ambiguous (30 ms? 30 s?), so it is
 * refused, except 0 (nothing, in any unit). Pure; return undefined on anything else.
 */
const UNIT_MS: Record<string, number> = { us: 0.001, µs: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDurationMs(v: unknown): number | undefined {
  if (typeof v === 'number') return v === 0 ? 0 : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s|m|h)?\s*$/.exec(v);
  if (!m || (m[2] === undefined && Number(m[1]) !== 0)) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] ?? 'ms']!;
}

/**
 * The number `v` holds when it is a duration written without a unit (`30`, `"30"`), for a
 * message saying what to write instead; undefined for anything else (0 included: it needs none).
 */
export function bareDurationNumber(v: unknown): string | undefined {
  const text = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : undefined) : typeof v === 'string' ? v.trim() : undefined;
  return text !== undefined && /^\d+(?:\.\d+)?$/.test(text) && Number(text) !== 0 ? text : undefined;
}

/** What to write instead of a bare duration number: `30 has no unit; write 30s or 30ms`. */
export function bareDurationMessage(n: string): string {
  return `${n} has no unit; write ${n}s or ${n}ms`;
}

/** `100`, `100/s`, `6000/m`: requests per second. */
export function parseRate(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(s|m))?\s*$/.exec(v);
  if (!m) return undefined;
  return m[2] === 'm' ? Number(m[1]) / 60 : Number(m[1]);
}

export function formatMs(ms: number): string {
  if (ms >= 1000) return `${+(ms / 1000).toFixed(2)}s`;
  if (ms >= 1) return `${+ms.toFixed(2)}ms`;
  return `${Math.round(ms * 1000)}us`;
}

export function formatDurationUs(us: number): string {
  return formatMs(us / 1000);
}
