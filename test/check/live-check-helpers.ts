/**
 * What the --check tests share: a rules file with an assertion on the notes server's search, and the
 * findings by rule id and count as each place gives them (recorded anomalies, mcptap check, replay --check).
 */
import { RecordingStore } from '../../src/store/recording-store.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { mcptap } from '../replay/replay-helpers.js';

/** Only create_note and friends lack annotations (a note each): off, so the assertion decides. */
export const rulesFile = (value: string) => `rules:
  surface/annotations-missing: off
assertions:
  - name: search finds
    select: { tool: search }
    expect: ['/result/structuredContent/results/0/id = "${value}"']
`;

export type Counts = Record<string, number>;

/** The recording's `check` anomalies, counted by rule id (their detail starts `rule (severity): `). */
export function recordedCounts(db: string): Counts {
  const store = RecordingStore.open(db);
  try {
    const out: Counts = {};
    for (const a of store.anomalies(store.latestRecordingId()!).filter((x) => x.kind === 'check')) {
      const rule = a.detail.split(' ')[0]!;
      out[rule] = (out[rule] ?? 0) + 1;
    }
    return out;
  } finally {
    store.close();
  }
}

const total = (c: { error: number; warning: number; note: number }) => c.error + c.warning + c.note;

export async function offlineCounts(db: string, rules: string): Promise<{ code: number; counts: Counts }> {
  const r = await mcptap(['check', db, '--rules', rules, '--json', '-']);
  const json = JSON.parse(r.stdout) as { counts: Record<string, { error: number; warning: number; note: number }> };
  return { code: r.code, counts: Object.fromEntries(Object.entries(json.counts).map(([id, c]) => [id, total(c)])) };
}

export async function replayCounts(db: string, rules: string): Promise<{ code: number; counts: Counts; stdout: string }> {
  const r = await mcptap(['replay', db, '--check', rules, '--pace', 'fast', '--json', '-', '--', ...notesCommand()]);
  const json = JSON.parse(r.stdout) as { check: { rules: { id: string; counts: { error: number; warning: number; note: number } }[] } };
  return { code: r.code, counts: Object.fromEntries(json.check.rules.map((x) => [x.id, total(x.counts)])), stdout: r.stderr };
}
