/**
 * Where `mcptap check`'s time goes, in this process, on one recording: the floor (the rows that
 * events() reads, as arrays, and each message's JSON.parse: no event, no rule), the TapEvent stream
 * (store.events(), no rule) and the whole check (every rule of the catalogue). Rounds interleave the
 * three so that load from elsewhere on the machine hits them alike; each stage's figure is its median
 * round, with the spread, in messages per second of wall time and of CPU time (user + system: less
 * moved by other processes on a shared machine). Used by the bigrec bench beside the CLI's own run.
 */
import { CHECKER_FACTORIES } from '../src/check/checkers.js';
import { checkRecording } from '../src/check/run-check.js';
import { RecordingStore } from '../src/store/recording-store.js';
import { SQL } from '../src/store/statements.js';
import { median } from './bench-util.js';

export interface StageFigures {
  stage: string;
  /** Messages per second of wall time, each round. */
  wall: number[];
  /** Messages per second of CPU time, each round. */
  cpu: number[];
}

const STAGES: [string, (store: RecordingStore, id: number) => void][] = [
  [
    'floor: rows + JSON.parse',
    (store, id) => {
      const frames = store.db.prepare(SQL.framesByOrd).raw(true);
      const raw = frames.columns().findIndex((c) => c.name === 'raw');
      for (const r of frames.iterate(id) as IterableIterator<unknown[]>) JSON.parse((r[raw] as Buffer).toString('utf8'));
      for (const sql of [SQL.startedByOrdBare, SQL.unstartedByOrdBare]) for (const _ of store.db.prepare(sql).raw(true).iterate(id));
    },
  ],
  [
    'events() (no rule)',
    (store, id) => {
      for (const _ of store.events(id));
    },
  ],
  ['check (every rule)', (store, id) => void checkRecording(store, id, { factories: CHECKER_FACTORIES })],
];

/** `rounds` interleaved rounds of each stage over recording `id` of `file`, holding `messages` messages. */
export function checkStages(file: string, messages: number, rounds: number): StageFigures[] {
  const store = RecordingStore.open(file);
  try {
    const id = store.latestRecordingId()!;
    const figures = STAGES.map(([stage]) => ({ stage, wall: [] as number[], cpu: [] as number[] }));
    for (let round = 0; round < rounds; round++) {
      for (const [i, [, run]] of STAGES.entries()) {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        run(store, id);
        const cpu = process.cpuUsage(cpu0);
        figures[i]!.wall.push(messages / ((performance.now() - t0) / 1000));
        figures[i]!.cpu.push(messages / ((cpu.user + cpu.system) / 1e6));
      }
    }
    return figures;
  } finally {
    store.close();
  }
}

/** Table rows: stage, median wall msg/s with its spread, median CPU msg/s with its spread. */
export function stageRows(figures: StageFigures[]): string[][] {
  const k = (v: number) => `${Math.round(v / 1000)}k`;
  const spread = (v: number[]) => `${median(v).toFixed(0)} (${k(Math.min(...v))}-${k(Math.max(...v))})`;
  return figures.map((f) => [f.stage, spread(f.wall), spread(f.cpu)]);
}
