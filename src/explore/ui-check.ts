/**
 * A check result (`mcptap check --json`) beside the recording it checked: its findings by recording
 * number, each one about an exchange found by its row (or exchange key) for the exchange's detail.
 */
import { McptapError } from '../errors.js';
import type { Finding } from '../check/finding.js';

export interface CheckIndex {
  /** The recording file the check read (as given to `mcptap check`). */
  file: string;
  /** The findings of each recording checked (an empty list: checked, nothing found). */
  recordings: Map<number, Finding[]>;
}

/** Checks and indexes a parsed check result (one recording's object, or `{ recordings: [...] }`); `source` names it in errors. */
export function indexCheck(value: unknown, source: string): CheckIndex {
  const bad = (why: string) => new McptapError('MCPTAP_UI_BAD_CHECK', `${source} is not the JSON of \`mcptap check --json\` (${why})`);
  const v = value as { file?: unknown; recordings?: unknown };
  if (typeof v !== 'object' || v === null || typeof v.file !== 'string') throw bad('no "file"');
  const parts = Array.isArray(v.recordings) ? (v.recordings as unknown[]) : [v];
  const recordings = new Map<number, Finding[]>();
  for (const p of parts) {
    const r = p as { recording?: unknown; findings?: unknown };
    if (typeof r !== 'object' || r === null || typeof r.recording !== 'number' || !Array.isArray(r.findings))
      throw bad('a recording without its number or findings');
    for (const f of r.findings as Record<string, unknown>[])
      if (typeof f?.ruleId !== 'string' || typeof f.message !== 'string' || typeof f.where !== 'object' || f.where === null)
        throw bad(`recording ${r.recording}: a finding without ruleId, message or where`);
    recordings.set(r.recording, r.findings as Finding[]);
  }
  return { file: v.file, recordings };
}

/** The findings about one exchange: by its row, else by its key in the event stream. */
export function findingsOf(findings: readonly Finding[], row: number, key: string): Finding[] {
  return findings.filter((f) => f.where.row === row || (f.where.row === undefined && f.where.exchangeKey === key));
}
