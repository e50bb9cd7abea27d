/**
 * The shapes the recording store reads and writes. Plain data; no SQL here (see recording-store.ts).
 */
import type { AnomalySeen, ConnectionInfo, LongStreamKind, TapEvent, Transport } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import type { Frame } from '../model/frame.js';
import type { Outcome } from '../model/outcome.js';

/** What a tap knows about its run when recording starts. */
export interface NewRecording {
  transport: Transport;
  /** stdio: the command line; http: the upstream URL. */
  target: string;
  startedUs: number;
  mcptapVersion: string;
  meta?: Record<string, unknown>;
}

export interface RecordingInfo extends NewRecording {
  id: number;
  endedUs?: number;
  /** Events the recorder dropped because its queue was full. */
  droppedQueue: number;
  /** Events the recorder dropped because the database refused them. */
  droppedWrite: number;
}

export interface RecordingEnd {
  endedUs: number;
  droppedQueue: number;
  droppedWrite: number;
  /** Why the recording may lack traffic (kept as `meta.incomplete`; `mcptap ls` shows it). */
  incomplete?: string;
}

/** A listing row for `mcptap ls`. */
export interface RecordingListing extends RecordingInfo {
  exchanges: number;
  outcomes: OutcomeCounts;
  anomalies: number;
}

/** An event with the recorder's ordinal: unique and increasing within a recording. */
export interface OrderedEvent {
  ord: number;
  event: TapEvent;
}

export interface WriteResult {
  /** Events stored. */
  written: number;
  /** Events refused one by one (a bad row); the rest of the batch was still committed. */
  rejected: number;
  firstError?: Error;
}

/** `started`: still in flight when the recording ended; `orphaned`: a response nobody asked for. */
export type ExchangeState = 'started' | 'completed' | 'orphaned';

/** Outcome as listed: an exchange still in flight at the end of the recording is `pending`. */
export type ListedOutcome = Outcome | 'pending';
export type OutcomeCounts = Partial<Record<ListedOutcome, number>>;

export interface StoredExchange extends Exchange {
  /** Row id, stable within the file; `show --exchange '#N'` accepts it. */
  rowid: number;
  recordingId: number;
  state: ExchangeState;
}

/** An exchange's plain columns, without its messages, progress or transport facts: what a scan of a big recording reads. */
export type ExchangeHead = Pick<
  StoredExchange,
  | 'rowid'
  | 'recordingId'
  | 'state'
  | 'connectionId'
  | 'direction'
  | 'method'
  | 'target'
  | 'era'
  | 'protocolVersion'
  | 'sessionId'
  | 'startUs'
  | 'endUs'
  | 'latencyUs'
  | 'outcome'
  | 'requestSeq'
> & {
  /** It has a response. */
  answered: boolean;
};

/** A client notification's plain columns (its frame's), without the message: what a replay plan keeps. */
export interface NotificationHead {
  rowid: number;
  recordingId: number;
  connectionId: string;
  sessionId?: string;
  timeUs: number;
  seq: number;
}

export type StoredFrame = Frame & { recordingId: number; exchangeKey?: string };

/**
 * A long-lived stream as its recorded frames show it: a standalone GET stream (frames from the
 * server only) or a `subscriptions/listen` stream. Times are its first and last server frames; a
 * stream that carried none left no frame, and is not listed.
 */
export interface StoredLongStream {
  connectionId: string;
  streamId: string;
  kind: LongStreamKind;
  firstUs: number;
  lastUs: number;
  /** Server frames on the stream (notifications, requests, responses). */
  frames: number;
  notifications: number;
}

export type StoredAnomaly = AnomalySeen & { recordingId: number; rowid: number };

export interface StoredConnection extends Partial<ConnectionInfo> {
  connectionId: string;
  recordingId: number;
  openedUs?: number;
  closedUs?: number;
  closeReason?: string;
  exitCode?: number | null;
  signal?: string | null;
}

export interface ExchangeFilter {
  recordingId?: number;
  method?: string;
  outcome?: ListedOutcome;
  target?: string;
  limit?: number;
  offset?: number;
}

export interface MethodSummary {
  method: string;
  /** The tool, on a tools/call row: `ls` gives each tool its own row. */
  tool?: string;
  count: number;
  outcomes: OutcomeCounts;
  /** Nearest-rank latency percentiles over exchanges that have a latency; absent when none do. */
  p50Us?: number;
  /** Only where asked for (`mcptap mcp`'s latency summary); `ls` shows p50/p95/p99. */
  p90Us?: number;
  p95Us?: number;
  p99Us?: number;
  maxUs?: number;
}

export interface RecordingSummary {
  recordingId: number;
  frames: number;
  connections: number;
  exchanges: number;
  outcomes: OutcomeCounts;
  anomalies: number;
  anomalyKinds: Record<string, number>;
  methods: MethodSummary[];
}
