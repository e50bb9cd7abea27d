/**
 * Long-lived streams of `listen` steps (2026-07-28 `subscriptions/listen`, legacy standalone GET
 * streams): how many were open, what arrived on them and how late. Pure aggregation, like
 * metrics.ts; the stream IO is the driver's.
 *
 * Delivery delay is measured when a notification says when it was fired (`_meta`
 * `io.mcptap/firedAtUs`, as the reference server's `trigger` tool stamps it): arrival minus firing,
 * both epoch µs (meaningful on one machine or synchronised clocks). A notification seen twice on
 * one stream (same method, firing time and sequence number) is a duplicate, counted apart.
 */
import { isRecord, type JsonRpcMessage } from '../../model/jsonrpc.js';
import { encodeHist, newHistogram, recordUs, type EncodedHistogram, type Histogram } from '../../util/histogram.js';
import { histogramFromJSON, type ResultPart } from './result-part.js';

import { FIRED_AT_META, SEQ_META as FIRED_SEQ_META } from '../../protocol/mcptap-meta.js';

export const ACK_METHOD = 'notifications/subscriptions/acknowledged';

export interface ListenResult {
  /** Streams opened (attempts). */
  streams: number;
  /** Streams still open when their phase ended (the healthy case). */
  held: number;
  /** Streams that failed to open or ended before their phase did. */
  failed: number;
  /** 2026-07-28 streams acknowledged (`notifications/subscriptions/acknowledged`). */
  acked: number;
  /** Most streams open at once (merged: sum of the shards', an upper bound). */
  maxOpen: number;
  /** Notifications received on all streams (acknowledgements not counted). */
  notifications: number;
  byMethod: Record<string, number>;
  duplicates: number;
  /** Fewest and most notifications one held stream received (failed streams are counted apart). */
  perStream: { min: number; max: number };
  /** Notifications per second while streams were open (merged: summed over shards). */
  perSecond: number;
  /** Send of the listen request to its acknowledgement, µs. */
  ack: EncodedHistogram;
  /** Firing (the server's stamp) to arrival, µs. */
  delay: EncodedHistogram;
}

/** One open stream's bookkeeping. */
export class ListenStream {
  count = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly stats: ListenStats,
    readonly sentUs: number,
    private readonly legacy: boolean,
  ) {}

  /** Legacy GET streams are open once their 200 arrives (the server has registered them by then). */
  headers(status: number): void {
    if (status === 200 && !this.acknowledged && this.legacy) this.markReady();
  }

  private acknowledged = false;

  private markReady(): void {
    this.acknowledged = true;
    this.stats.ready();
  }

  message(m: JsonRpcMessage, timeUs: number): void {
    if (!('method' in m) || 'id' in m) return;
    const meta = isRecord(m.params) && isRecord(m.params._meta) ? m.params._meta : undefined;
    if (m.method === ACK_METHOD) {
      if (!this.acknowledged) this.markReady();
      return this.stats.acked(timeUs - this.sentUs);
    }
    const firedAt = meta?.[FIRED_AT_META];
    if (typeof firedAt === 'number') {
      const key = `${m.method}|${firedAt}|${String(meta?.[FIRED_SEQ_META])}`;
      if (this.seen.has(key)) return this.stats.duplicate();
      this.seen.add(key);
    }
    this.count++;
    this.stats.record(m.method, typeof firedAt === 'number' ? timeUs - firedAt : undefined);
  }
}

/** Every stream of `listen` steps: the result part of listen. */
export class ListenStats implements ResultPart<[string, number | undefined], ListenResult> {
  private streams = 0;
  private held = 0;
  private failed = 0;
  private ackCount = 0;
  private open = 0;
  private maxOpen = 0;
  private notifications = 0;
  private readonly byMethod: Record<string, number> = {};
  private duplicates = 0;
  private min = Infinity;
  private max = 0;
  private firstOpenUs = Infinity;
  private lastCloseUs = 0;
  private readonly ackHist: Histogram = newHistogram();
  private readonly delayHist: Histogram = newHistogram();
  /** Notifications per second of the parts merged in (each over its own span). */
  private mergedPerSecond = 0;

  /** Delivery delays so far (live thresholds). */
  get delayHistogram(): Histogram {
    return this.delayHist;
  }

  get used(): boolean {
    return this.streams > 0;
  }

  /** Called with the number of streams ready so far (acknowledged, or a legacy GET's 200). */
  onReady: ((ready: number) => void) | undefined;
  private readyCount = 0;

  opened(sentUs: number, legacy: boolean): ListenStream {
    this.streams++;
    this.open++;
    if (this.open > this.maxOpen) this.maxOpen = this.open;
    if (sentUs < this.firstOpenUs) this.firstOpenUs = sentUs;
    return new ListenStream(this, sentUs, legacy);
  }

  ready(): void {
    this.onReady?.(++this.readyCount);
  }

  /** The stream ended: `held` when it lasted until its phase's end. */
  closed(s: ListenStream, held: boolean, timeUs: number): void {
    this.open--;
    if (held) {
      this.held++;
      if (s.count < this.min) this.min = s.count;
      if (s.count > this.max) this.max = s.count;
    } else this.failed++;
    if (timeUs > this.lastCloseUs) this.lastCloseUs = timeUs;
  }

  acked(us: number): void {
    this.ackCount++;
    recordUs(this.ackHist, us);
  }

  duplicate(): void {
    this.duplicates++;
  }

  /** A notification arrived (its delay when it carried a firing time). */
  record(method: string, delayUs: number | undefined): void {
    this.notifications++;
    this.byMethod[method] = (this.byMethod[method] ?? 0) + 1;
    if (delayUs !== undefined) recordUs(this.delayHist, delayUs);
  }

  /** Own notifications over the span streams were open, plus the rates of parts merged in. */
  private perSecond(): number {
    const spanS = Math.max(0, this.lastCloseUs - this.firstOpenUs) / 1e6;
    return (spanS > 0 ? this.notifications / spanS : 0) + this.mergedPerSecond;
  }

  /** Counts and histograms add; most open at once and the rate add too (upper bounds for shards of one run). */
  merge(o: ListenStats): void {
    this.mergedPerSecond = this.perSecond() + o.perSecond();
    this.firstOpenUs = Infinity;
    this.lastCloseUs = 0;
    this.streams += o.streams;
    this.held += o.held;
    this.failed += o.failed;
    this.ackCount += o.ackCount;
    this.maxOpen += o.maxOpen;
    this.notifications += o.notifications;
    for (const [k, n] of Object.entries(o.byMethod)) this.byMethod[k] = (this.byMethod[k] ?? 0) + n;
    this.duplicates += o.duplicates;
    this.min = Math.min(this.min, o.min);
    this.max = Math.max(this.max, o.max);
    this.ackHist.add(o.ackHist);
    this.delayHist.add(o.delayHist);
  }

  toJSON(): ListenResult {
    return {
      streams: this.streams,
      held: this.held,
      failed: this.failed,
      acked: this.ackCount,
      maxOpen: this.maxOpen,
      notifications: this.notifications,
      byMethod: { ...this.byMethod },
      duplicates: this.duplicates,
      perStream: { min: this.min === Infinity ? 0 : this.min, max: this.max },
      perSecond: this.perSecond(),
      ack: encodeHist(this.ackHist),
      delay: encodeHist(this.delayHist),
    };
  }

  static fromJSON(j: ListenResult): ListenStats {
    const s = new ListenStats();
    s.streams = j.streams;
    s.held = j.held;
    s.failed = j.failed;
    s.ackCount = j.acked;
    s.maxOpen = j.maxOpen;
    s.notifications = j.notifications;
    Object.assign(s.byMethod, j.byMethod);
    s.duplicates = j.duplicates;
    s.min = j.perStream.min;
    s.max = j.perStream.max;
    s.mergedPerSecond = j.perSecond;
    s.ackHist.add(histogramFromJSON(j.ack));
    s.delayHist.add(histogramFromJSON(j.delay));
    return s;
  }
}
