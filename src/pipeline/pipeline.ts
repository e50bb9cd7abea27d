/**
 * Where the parts are wired: taps push chunks or message bodies in, decoders make frames, the correlator makes exchanges,
 * and every event goes to every sink. Invariants: nothing here can stall or break forwarding (taps forward first; every
 * entry point catches its own failures, counts them, and returns); a sink that throws is counted and said once, the
 * others still get the event.
 */
import type { ConnectionInfo, TapEvent, AnomalyKind, LongStreamEdge, StreamEnd } from '../model/events.js';
import { checkRequestHeaders } from '../protocol/headers.js';
import type { AnomalyExtra, ConnectionClose, PipelineInput, RequestHeaders } from './pipeline-input.js';
import type { Channel, Chunk, Direction, FrameContext, FrameOrigin } from '../model/frame.js';
import { Correlator, type CorrelatorOptions } from '../correlate/correlator.js';
import { LongStreams } from '../correlate/long-streams.js';
import { NdjsonDecoder } from '../parse/ndjson-decoder.js';
import { counter, parseMessageBytes } from '../parse/frame-parser.js';
import type { Sink } from '../sinks/sink.js';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { SayOnce } from '../util/say-once.js';

export interface PipelineOptions {
  clock?: Clock;
  logger?: Logger;
  correlator?: CorrelatorOptions;
  /** Longest stdio line decoded (bytes); longer lines are forwarded but recorded as `too_long`. */
  maxLineBytes?: number;
  /** How often cancelled requests are checked against their grace period; 0 disables the timer. */
  tickMs?: number;
}

export class Pipeline implements PipelineInput {
  readonly clock: Clock;
  private readonly logger: Logger;
  private readonly sinkList: Sink[] = [];
  private readonly sinkThrew: SayOnce;
  private readonly correlator: Correlator;
  private readonly longStreams = new LongStreams();
  private readonly seq = counter();
  private readonly decoders = new Map<string, NdjsonDecoder>();
  private readonly maxLineBytes: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private internalErrors = 0;
  private readonly subscribers = new Set<(e: TapEvent) => void>();

  constructor(opts: PipelineOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger ?? silentLogger;
    this.sinkThrew = new SayOnce((m) => this.logger.warn(m));
    this.correlator = new Correlator(opts.correlator);
    this.maxLineBytes = opts.maxLineBytes;
    const tickMs = opts.tickMs ?? 250;
    if (tickMs > 0) {
      this.timer = setInterval(() => this.tick(this.clock.nowUs()), tickMs);
      this.timer.unref();
    }
  }

  addSink(sink: Sink): () => void {
    this.sinkList.push(sink);
    return () => {
      const i = this.sinkList.indexOf(sink);
      if (i >= 0) this.sinkList.splice(i, 1);
    };
  }

  sinks(): readonly Sink[] {
    return this.sinkList;
  }

  /** Listen to every event (for live displays and tests); returns the unsubscribe function. */
  subscribe(fn: (e: TapEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** Failures inside the pipeline itself (should stay 0; counted instead of thrown). */
  get errors(): number {
    return this.internalErrors;
  }

  openConnection(info: ConnectionInfo, timeUs = this.clock.nowUs()): void {
    this.guard(() => {
      const era = this.correlator.connection(info.connectionId);
      if (info.sessionId) era.sessionId = info.sessionId;
      this.emit({ type: 'connection-opened', timeUs, connection: info });
    });
  }

  /** Time passes: cancelled requests past their grace period complete (the timer calls this; so does an import, at the input's own times). */
  tick(nowUs: number): void {
    this.guard(() => this.emitAll(this.correlator.tick(nowUs)));
  }

  pushChunk(chunk: Chunk): void {
    this.guard(() => {
      const frames = this.decoder(chunk.connectionId, chunk.direction, chunk.channel).push(chunk.bytes, chunk.timeUs);
      for (const f of frames) this.emitAll(this.correlator.push(f));
    });
  }

  pushMessage(origin: FrameOrigin, raw: Buffer): void {
    this.guard(() => {
      for (const f of parseMessageBytes(raw, origin, this.seq)) this.emitAll(this.correlator.push(f));
    });
  }

  /** An HTTP request body; its MCP headers are checked against each message in it (a mismatch is a linked `header_mismatch` anomaly, never a block). */
  pushRequest(origin: FrameOrigin, raw: Buffer, headers: RequestHeaders): void {
    this.guard(() => {
      const frames = parseMessageBytes(raw, origin, this.seq);
      // Headers are checked once the message's events are out; for a batch, once all its frames' events are.
      if (frames.length === 1) {
        const events = this.correlator.push(frames[0]!);
        this.emitAll(events);
        this.checkHeaders(events, origin, headers);
        return;
      }
      const all: TapEvent[][] = [];
      for (const f of frames) {
        const events = this.correlator.push(f);
        this.emitAll(events);
        all.push(events);
      }
      for (const events of all) this.checkHeaders(events, origin, headers);
    });
  }

  /** A `header_mismatch` anomaly, linked to its exchange, per disagreement of the headers with a request message among `events`. */
  private checkHeaders(events: TapEvent[], origin: FrameOrigin, headers: RequestHeaders): void {
    for (const e of events) {
      if (e.type !== 'frame' || e.frame.kind !== 'message' || e.frame.direction !== 'c2s') continue;
      const message = e.frame.message;
      for (const m of checkRequestHeaders(headers, message)) {
        const id = (message as { id?: unknown }).id;
        const method = (message as { method?: string }).method ?? '';
        this.anomaly('header_mismatch', origin.connectionId, `${method}${id !== undefined ? ` id ${JSON.stringify(id)}` : ''}: ${m.detail}`, {
          direction: 'c2s',
          timeUs: origin.timeUs,
          ...(e.exchangeKey ? { exchangeKey: e.exchangeKey } : {}),
        });
      }
    }
  }

  /** Stream bytes forwarded but not observed: decoding resumes at a line boundary, and the gap is a `dropped` anomaly. */
  gap(connectionId: string, direction: Direction, channel: Channel, lost: { bytes: number; chunks: number; endedAtNewline: boolean; timeUs: number }): void {
    this.guard(() => {
      this.decoders.get(`${connectionId}|${direction}|${channel}`)?.gap(lost.endedAtNewline);
      this.anomaly(
        'dropped',
        connectionId,
        `${lost.bytes} bytes (${lost.chunks} chunks) of ${channel} forwarded but not observed: the tap's side path was full`,
        { direction, timeUs: lost.timeUs },
      );
    });
  }

  endStream(connectionId: string, streamId: string, end: StreamEnd): void {
    this.guard(() => this.emitAll(this.correlator.endStream(connectionId, streamId, end)));
  }

  /** A long-lived stream (standalone GET, `subscriptions/listen`) opened or closed: emits `stream_opened`/`stream_closed`. */
  longStream(connectionId: string, streamId: string, edge: LongStreamEdge): void {
    this.guard(() => {
      const e = this.longStreams.edge(connectionId, streamId, edge);
      if (e) this.emit(e);
    });
  }

  /** Long-lived streams open now (standalone GET, `subscriptions/listen`). */
  get openLongStreams(): number {
    return this.longStreams.size;
  }

  /** Emits an `anomaly` event (a protocol violation or a loss), at `extra.timeUs` or now. */
  anomaly(kind: AnomalyKind, connectionId: string, detail: string, extra: AnomalyExtra = {}): void {
    this.guard(() =>
      this.emit({
        type: 'anomaly',
        kind,
        connectionId,
        detail,
        timeUs: extra.timeUs ?? this.clock.nowUs(),
        ...(extra.direction ? { direction: extra.direction } : {}),
        ...(extra.exchangeKey ? { exchangeKey: extra.exchangeKey } : {}),
      }),
    );
  }

  closeConnection(connectionId: string, close: ConnectionClose): void {
    this.guard(() => {
      const timeUs = close.timeUs ?? this.clock.nowUs();
      for (const [key, dec] of this.decoders) {
        if (!key.startsWith(`${connectionId}|`)) continue;
        for (const f of dec.end(timeUs)) this.emitAll(this.correlator.push(f));
        this.decoders.delete(key);
      }
      this.emitAll(this.correlator.close(connectionId, timeUs, close.errorClass));
      this.emitAll(this.longStreams.closeConnection(connectionId, timeUs));
      this.emit({
        type: 'connection-closed',
        timeUs,
        connectionId,
        reason: close.reason,
        ...(close.exitCode !== undefined ? { exitCode: close.exitCode } : {}),
        ...(close.signal !== undefined ? { signal: close.signal } : {}),
      });
    });
  }

  async flush(): Promise<void> {
    await Promise.all(this.sinkList.map((s) => s.flush().catch((e) => this.logger.warn(`sink ${s.name} flush failed: ${String(e)}`))));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(this.sinkList.map((s) => s.close().catch((e) => this.logger.warn(`sink ${s.name} close failed: ${String(e)}`))));
  }

  private decoder(connectionId: string, direction: Direction, channel: Channel): NdjsonDecoder {
    const key = `${connectionId}|${direction}|${channel}`;
    let d = this.decoders.get(key);
    if (!d) {
      d = new NdjsonDecoder({ connectionId, direction, channel, seq: this.seq, ...(this.maxLineBytes ? { maxLineBytes: this.maxLineBytes } : {}) });
      this.decoders.set(key, d);
    }
    return d;
  }

  private emitAll(events: TapEvent[]): void {
    for (const e of events) this.emit(e);
  }

  private emit(e: TapEvent): void {
    if (e.type === 'frame') this.longStreams.frame(e.frame);
    for (const sink of this.sinkList) {
      try {
        sink.onEvent(e);
      } catch (err) {
        this.sinkThrew.count(sink.name, () => `sink ${sink.name} threw (further errors counted, not logged): ${String(err)}`);
      }
    }
    for (const fn of this.subscribers) {
      try {
        fn(e);
      } catch (err) {
        this.internalErrors++;
        this.logger.debug(`subscriber threw: ${String(err)}`);
      }
    }
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.internalErrors++;
      if (this.internalErrors === 1) this.logger.error(`pipeline error (traffic unaffected; further errors counted): ${(err as Error)?.stack ?? String(err)}`);
    }
  }
}

export type { FrameOrigin, FrameContext };
