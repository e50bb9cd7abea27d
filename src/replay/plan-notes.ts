/**
 * The client's own notifications in a replay plan (replay-plan.ts): gathered as columns while the
 * recording streams by, then placed among the steps, in recorded order, each after the steps
 * recorded before it. Sending them is replay-notes.ts's schedule.
 */
import type { NotificationHead } from '../store/types.js';
import { f64, u32 } from './plan-columns.js';

/** Note `j` is the frame of row `rowids[j]`, sent once steps `0 .. before[j]` were (notes in recorded order). */
export interface PlanNotes {
  size: number;
  rowids: Float64Array;
  /** µs after the first replayed request (as the steps'; 0 at the earliest). */
  offsetsUs: Float64Array;
  sessionOf: Uint32Array;
  /** How many steps were recorded before it: non-decreasing. */
  before: Uint32Array;
  /** Note j also waits for steps `afterList[afterStart[j] .. afterStart[j + 1]]` to be done (answered before it). */
  afterStart: Uint32Array;
  afterList: Uint32Array;
}

/** The notes of a plan being built, as columns; `key` is the replay session a note was recorded in. */
export class NoteColumns {
  private readonly start = f64();
  private readonly seq = f64();
  private readonly rowid = f64();
  private readonly recording = u32();
  private readonly key = u32();
  private readonly keys = new Map<string, number>();

  add(key: string, n: NotificationHead): void {
    if (!this.keys.has(key)) this.keys.set(key, this.keys.size);
    this.start.push(n.timeUs);
    this.seq.push(n.seq);
    this.rowid.push(n.rowid);
    this.recording.push(n.recordingId);
    this.key.push(this.keys.get(key)!);
  }

  /** The notes in recorded order, each placed after the steps recorded before it; those of no replayed session left out. */
  build(shift: (rec: number) => number, start: Float64Array, seq: Float64Array, t0: number, keptIndex: Map<string, number>): PlanNotes {
    const keys = [...this.keys.keys()];
    const rec = this.recording.view();
    const sessionOf = (j: number): number | undefined => {
      const key = keys[this.key.data[j]!]!;
      // A stateless modern session is one per recording: its notes have no session id.
      return keptIndex.get(key) ?? keptIndex.get(`${rec[j]}/modern`);
    };
    const at = (j: number): number => this.start.data[j]! + shift(rec[j]!);
    const order: number[] = [];
    for (let j = 0; j < this.start.length; j++) if (sessionOf(j) !== undefined) order.push(j);
    order.sort((a, b) => at(a) - at(b) || this.seq.data[a]! - this.seq.data[b]! || a - b);
    const size = order.length;
    const out: PlanNotes = {
      size,
      rowids: new Float64Array(size),
      offsetsUs: new Float64Array(size),
      sessionOf: new Uint32Array(size),
      before: new Uint32Array(size),
      afterStart: new Uint32Array(size + 1),
      afterList: new Uint32Array(0),
    };
    let lo = 0;
    order.forEach((j, k) => {
      const t = at(j) - t0;
      // Steps' starts are already relative to t0; a step at the very same µs goes first when its frame did.
      while (lo < start.length && (start[lo]! < t || (start[lo]! === t && seq[lo]! < this.seq.data[j]!))) lo++;
      out.rowids[k] = this.rowid.data[j]!;
      out.offsetsUs[k] = Math.max(0, t);
      out.sessionOf[k] = sessionOf(j)!;
      out.before[k] = lo;
    });
    return out;
  }
}
