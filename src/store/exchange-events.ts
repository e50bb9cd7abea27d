/**
 * Both events of every exchange from ONE read of its row: the row gives its `exchange-started`
 * event at its `started_ord` and is then held until its `completed_ord` (the exchanges in flight,
 * as a checker holds them), instead of a second cursor reading every row again. Rows that only
 * complete (an orphan: a response nobody asked for) come from their own cursor.
 */
import type { TapEvent } from '../model/events.js';
import type { OrdSource } from './merge-by-ord.js';
import type { Row } from './rows.js';

export interface ExchangeEventsOptions {
  /** Rows with a start, ascending in `started_ord`. */
  started: Iterator<Row>;
  /** Rows with a completion and no start, ascending in `completed_ord`. */
  unstarted: Iterator<Row>;
  startedEvent(row: Row): TapEvent;
  completionEvent(row: Row): TapEvent;
}

export class ExchangeEvents implements OrdSource {
  private startedHead: IteratorResult<Row> | undefined;
  private unstartedHead: IteratorResult<Row> | undefined;
  /** Started rows awaiting their completion: a binary min-heap on `completed_ord`. */
  private readonly inFlight: Row[] = [];

  constructor(private readonly o: ExchangeEventsOptions) {}

  peek(): number | undefined {
    const s = this.startedOrd();
    const u = this.unstartedOrd();
    const c = this.inFlight.length > 0 ? (this.inFlight[0]!.completed_ord as number) : undefined;
    let best = s;
    if (c !== undefined && (best === undefined || c < best)) best = c;
    if (u !== undefined && (best === undefined || u < best)) best = u;
    return best;
  }

  take(): TapEvent {
    const best = this.peek();
    if (best === this.startedOrd()) {
      const row = this.startedHead!.value as Row;
      this.startedHead = undefined;
      if (row.completed_ord !== null) this.push(row);
      return this.o.startedEvent(row);
    }
    if (best === this.unstartedOrd()) {
      const row = this.unstartedHead!.value as Row;
      this.unstartedHead = undefined;
      return this.o.completionEvent(row);
    }
    return this.o.completionEvent(this.pop());
  }

  close(): void {
    this.o.started.return?.();
    this.o.unstarted.return?.();
  }

  private startedOrd(): number | undefined {
    const h = (this.startedHead ??= this.o.started.next());
    return h.done ? undefined : (h.value.started_ord as number);
  }

  private unstartedOrd(): number | undefined {
    const h = (this.unstartedHead ??= this.o.unstarted.next());
    return h.done ? undefined : (h.value.completed_ord as number);
  }

  private push(row: Row): void {
    const heap = this.inFlight;
    let i = heap.push(row) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent]!.completed_ord as number) <= (row.completed_ord as number)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = row;
  }

  private pop(): Row {
    const heap = this.inFlight;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= heap.length) break;
        const r = l + 1;
        const child = r < heap.length && (heap[r]!.completed_ord as number) < (heap[l]!.completed_ord as number) ? r : l;
        if ((heap[child]!.completed_ord as number) >= (last.completed_ord as number)) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
