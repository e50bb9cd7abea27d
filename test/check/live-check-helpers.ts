/**
 * What the --check tests share: a rules file with an assertion on the notes server's search, and the
 * findings by rule id and count as each place gives them (recorded anomalies, mcptap check, replay --check).
 */
import { RecordingStore } from '../../src/store/recording-store.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { mcptap } from '../replay/replay-helpers.js';

/**
 * Only create_note and friends lack annotations (a note each): off, so the assertion decides.
 * `rules` adds lines under `rules:` (a rule id and its severity, say).
 */
export const rulesFile = (value: string, rules: string[] = []) => `rules:
  surface/annotations-missing: off
${rules.map((r) => `  ${r}\n`).join('')}assertions:
  - name: search finds
    select: { tool: search }
    expect: ['/result/structuredContent/results/0/id = "${value}"']
`;

export type Counts = Record<string, number>;

/** The recording's `check` anomalies, counted by rule id (their detail starts `rule (severity): `). */
export function recordedCounts(db: string): Counts {
  const out: Counts = {};
  for (const detail of recordedDetails(db)) {
    const rule = detail.split(' ')[0]!;
    out[rule] = (out[rule] ?? 0) + 1;
  }
  return out;
}

/** The details of the recording's `check` anomalies (`rule (severity): message`), sorted. */
export function recordedDetails(db: string): string[] {
  const store = RecordingStore.open(db);
  try {
    return store
      .anomalies(store.latestRecordingId()!)
      .filter((x) => x.kind === 'check')
      .map((a) => a.detail)
      .sort();
  } finally {
    store.close();
  }
}

/** A finding as the JSON reports give it (the members compared across places). */
export interface JsonFinding {
  ruleId: string;
  severity: string;
  message: string;
  pointer?: string;
}

/** A finding as the recording keeps it live: `rule (severity): message`. */
export const detailOf = (f: JsonFinding) => `${f.ruleId} (${f.severity}): ${f.message}`;

const total = (c: { error: number; warning: number; note: number }) => c.error + c.warning + c.note;

export async function offlineCounts(db: string, rules: string): Promise<{ code: number; counts: Counts; findings: JsonFinding[] }> {
  const r = await mcptap(['check', db, '--rules', rules, '--json', '-']);
  const json = JSON.parse(r.stdout) as { counts: Record<string, { error: number; warning: number; note: number }>; findings: JsonFinding[] };
  return { code: r.code, counts: Object.fromEntries(Object.entries(json.counts).map(([id, c]) => [id, total(c)])), findings: json.findings };
}

/** `replay --check` against the target (default: the notes server over stdio): counts by rule and each rule's first finding. */
export async function replayCounts(
  db: string,
  rules: string,
  target: string[] = ['--', ...notesCommand()],
): Promise<{ code: number; counts: Counts; first: Record<string, JsonFinding | undefined>; stdout: string }> {
  const r = await mcptap(['replay', db, '--check', rules, '--pace', 'fast', '--json', '-', ...target]);
  const json = JSON.parse(r.stdout) as { check: { rules: { id: string; counts: { error: number; warning: number; note: number }; first?: JsonFinding }[] } };
  return {
    code: r.code,
    counts: Object.fromEntries(json.check.rules.map((x) => [x.id, total(x.counts)])),
    first: Object.fromEntries(json.check.rules.map((x) => [x.id, x.first])),
    stdout: r.stderr,
  };
}
