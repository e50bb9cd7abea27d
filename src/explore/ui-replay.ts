/**
 * A replay's result (`mcptap replay --json`) beside the recording it replayed: per recorded exchange
 * row, its verdict and differences, and the replayed answer rebuilt from the recorded one with each
 * differing JSON Pointer set to the replayed value (the result holds the differences, not the answers).
 */
import { McptapError } from '../errors.js';
import { parsePointer } from '../data-file/json-pointer.js';

export interface ReplayDifference {
  kind: string;
  path?: string;
  recorded?: unknown;
  replayed?: unknown;
  message: string;
}

export interface ReplayedRow {
  recordedOutcome?: string;
  replayedOutcome?: string;
  recordedLatencyUs?: number | null;
  replayedLatencyUs?: number | null;
  notSent?: boolean;
  differences: ReplayDifference[];
}

export interface ReplayIndex {
  /** The recording file the replay read (as given to `mcptap replay`). */
  file: string;
  target: string;
  counts: unknown;
  rows: Map<number, ReplayedRow>;
}

/** Checks and indexes a parsed replay result; `source` names it in errors. */
export function indexReplay(value: unknown, source: string): ReplayIndex {
  const v = value as { file?: unknown; target?: unknown; counts?: unknown; exchanges?: unknown };
  if (typeof v !== 'object' || v === null || typeof v.file !== 'string' || !Array.isArray(v.exchanges))
    throw new McptapError('MCPTAP_UI_BAD_REPLAY', `${source} is not the JSON of \`mcptap replay --json\` (no "file" and "exchanges")`);
  const rows = new Map<number, ReplayedRow>();
  for (const x of v.exchanges as Record<string, unknown>[]) {
    if (typeof x?.exchange !== 'number' || !Array.isArray(x.differences))
      throw new McptapError('MCPTAP_UI_BAD_REPLAY', `${source}: an exchange without a row number or differences`);
    const { exchange, differences, ...rest } = x;
    rows.set(exchange, { ...(rest as Omit<ReplayedRow, 'differences'>), differences: differences as ReplayDifference[] });
  }
  return { file: v.file, target: typeof v.target === 'string' ? v.target : '', counts: v.counts ?? {}, rows };
}

/** The recorded answer with each value difference applied: what the replay's target answered, as far as the result tells. */
export function replayedAnswer(recorded: unknown, differences: readonly ReplayDifference[]): unknown {
  let doc = structuredClone(recorded);
  for (const d of differences) {
    if (d.kind !== 'value' || d.path === undefined) continue;
    const segs = parsePointer(d.path);
    if (segs.length === 0) {
      doc = structuredClone(d.replayed);
      continue;
    }
    let at = doc as Record<string, unknown>;
    for (const s of segs.slice(0, -1)) {
      if (typeof at[s] !== 'object' || at[s] === null) at[s] = {};
      at = at[s] as Record<string, unknown>;
    }
    const last = segs.at(-1)!;
    if (d.replayed === undefined) delete at[last];
    else at[last] = structuredClone(d.replayed);
  }
  return doc;
}
