/**
 * The recording indexer, as its parent (the tap's thread, recording.ts) sees it: a child process at
 * the lowest priority that reads the spool (fd 4) and builds the recording through a Pipeline and
 * the SQLite recorder, yielding to the traffic and catching up in lulls, at the latest at the close.
 * A process, not a thread: a niced thread still shares the process's un-niced GC threads
 * (docs/performance.md, "The stdio tap with `--record`").
 * Invariants: `ready` or `failed` comes once, before anything else; `indexed` only grows; `close`
 * resolves once everything spooled before it is recorded and the recording ended. The child leaves
 * with its parent and ignores the terminal's signals once loaded; one that a group signal (Ctrl-C,
 * `timeout`, systemd) kills while it loads is replaced, nothing spooled lost (issue 36).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serialize } from 'node:v8';
import { fromWireError, McptapError, type WireError } from '../errors.js';
import type { ClockOrigin } from '../util/clock.js';
import type { Logger, LogLevel } from '../util/logger.js';
import { threadEntry } from '../util/thread-entry.js';
import { lowerChildPriority, restoreChildPriority } from '../util/thread-priority.js';
import { catchesSignal, unreapedExit } from '../util/proc-exit.js';
import { JournalSlot, selfFields, tapJournalPath } from '../store/tap-journal.js';
import type { WorkerSinkOptions } from './worker-wire.js';

/** How often the indexer hears that more was spooled, at most (ms): well below its quiet time (QUIET_MS, indexer-process.ts). */
export const SPOOLED_EVERY_MS = 40;

/** What the indexer's recorder is built from (sink-setup.ts). */
export type IndexerSinkOptions = Omit<WorkerSinkOptions, 'telemetry'> & { record: string; requireRecording: boolean };

/** The first message to the child (all go on its stdin, see spawn()): everything it needs (the key never goes through argv or env). */
export interface IndexerStart {
  type: 'start';
  /** AES key of the spool, hex. */
  key: string;
  /** The spool's size (it is a ring). */
  capacity: number;
  /** The recorder's settings (telemetry stays live, in the pipeline worker). */
  sinks: IndexerSinkOptions;
  logLevel: LogLevel;
  clockOrigin: ClockOrigin;
  maxLineBytes?: number;
  nice: number;
  /** How long indexing waits while traffic flows (ms). */
  maxLagMs?: number;
  /** The tap's journal (tap-journal.ts), where the indexer says how far it indexed. */
  journal?: string;
}

/** `spooled.waitingForRoom`: batches wait in the tap for room in the spool; waiting for a lull would only lose traffic. */
export type ToIndexer =
  | IndexerStart
  | { type: 'spooled'; end: number; waitingForRoom?: boolean }
  /** Traffic is over (the tap is closing): back to the default priority, whatever the child is doing. */
  | { type: 'stop-yielding' }
  | { type: 'close'; end: number; endedUs: number; incomplete?: string };

export type FromIndexer =
  | { type: 'ready' }
  | ({ type: 'failed' } & WireError)
  | { type: 'indexed'; position: number }
  | { type: 'fatal'; message: string }
  /** `dropped`: events the recorder could not write (a full disk), or queue; the recording lacks them. */
  | { type: 'closed'; lines: string[]; dropped?: number };

export interface RecordingIndexerOptions extends Omit<IndexerStart, 'type' | 'nice' | 'key'> {
  /** The spool's descriptor and key. */
  fd: number;
  key: Buffer;
  logger: Logger;
  /** Scheduling niceness (Linux; default 19: only otherwise idle CPU under contention). */
  nice?: number;
  onIndexed?: (position: number) => void;
  onFatal?: (err: Error) => void;
}

/** How often a child a group signal killed while it loaded is replaced (a replacement is detached, out of the group's reach). */
const MAX_RESPAWNS = 3;
/** Signals the child ignores once its module has loaded: dying of one means it had done nothing yet. */
const START_UP_SIGNALS: readonly string[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export class RecordingIndexer {
  /** Resolves once the recording is open; rejects (MCPTAP_*) when it cannot be. */
  readonly ready: Promise<void>;
  private settleReady!: { resolve: () => void; reject: (err: McptapError) => void };
  private isOpen = false;
  /** How far the spool is in the recording (bytes of spool). */
  private position = 0;
  private dead: string | undefined;
  private closing: Promise<string[]> | undefined;
  private closedWith: ((lines: string[]) => void) | undefined;
  private readonly notices = new SpooledNotices((end, waitingForRoom) => this.spooledNow(end, waitingForRoom));
  /** The spool's end when the tap closed the recording. */
  private closeEnd: number | undefined;
  private stoppedYielding = false;
  private child!: ChildProcess;
  private respawns = 0;
  private unrefd = false;
  /** What a replacement child must hear again: its start, the last spool end said, the close. */
  private readonly replay: { start: IndexerStart; spooled?: ToIndexer; close?: ToIndexer };
  /** Events the recorder dropped (said with its close): the recording lacks them. */
  recorderDropped = 0;
  /** Says how far the tap spooled, for a command that opens the recording after all of it was killed. */
  private readonly journal: JournalSlot | undefined;

  /** Spawns the indexer with the spool, not waiting for `ready`: a tap killed from now on leaves the spool to it all the same. */
  static spawn(opts: RecordingIndexerOptions): RecordingIndexer {
    const { logger: _logger, onIndexed: _onIndexed, onFatal: _onFatal, nice, fd: _fd, key, ...rest } = opts;
    const journal = tapJournalPath(opts.sinks.record, process.pid);
    return new RecordingIndexer(opts, { type: 'start', key: key.toString('hex'), nice: nice ?? 19, journal, ...rest });
  }

  private constructor(
    private readonly opts: RecordingIndexerOptions,
    start: IndexerStart,
  ) {
    this.ready = new Promise<void>((resolve, reject) => (this.settleReady = { resolve, reject }));
    this.ready.catch(() => {});
    this.replay = { start };
    this.journal = JournalSlot.open(start.journal!, 'tap', true);
    this.journaled(0);
    this.startChild(false);
  }

  /**
   * The first child is not detached: a session of its own would be a scheduling group of its own
   * (Linux autogroup), where its niceness counts for nothing against the tap's group. A group signal
   * (Ctrl-C) reaches it then, which it ignores once loaded. A replacement ({@link MAX_RESPAWNS}) is
   * detached: the group that killed its predecessor is being signalled again, now and then.
   */
  private startChild(detached: boolean): void {
    const entry = fileURLToPath(threadEntry(import.meta.url, 'indexer-process'));
    const child = spawn(process.execPath, [entry], {
      stdio: ['pipe', 'ignore', 'inherit', 'ipc', this.opts.fd],
      serialization: 'advanced',
      detached,
    });
    this.child = child;
    // Named in the journal before it can read `start` (and write its slot itself): a tap that exits
    // while it still loads leaves a journal that says it is completing the recording, not lost.
    if (child.pid !== undefined) this.journal?.nameIndexer(child.pid);
    // Niced from its first instruction: its start-up (a whole Node process) yields to the server's.
    if (child.pid !== undefined && !this.stoppedYielding) lowerChildPriority(child.pid, this.replay.start.nice);
    child.on('message', (m: FromIndexer) => this.onMessage(m));
    child.on('error', (err) => this.die(`recording indexer failed: ${err.message}`));
    child.on('exit', (code, signal) => this.exited(child, code, signal));
    // Messages to the child go on its stdin, not the IPC channel: a pipe keeps what was written
    // for the child if this process is killed before the child (still starting, or stopped) has
    // read it, where IPC messages would be lost with us. The pipe's end tells the child we are gone.
    child.stdin!.on('error', () => {});
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    if (this.unrefd) this.unref();
    const { start, spooled, close } = this.replay;
    this.post(start);
    if (this.stoppedYielding) this.post({ type: 'stop-yielding' });
    if (spooled) this.post(spooled);
    if (close) this.post(close);
  }

  /** A child killed by a stop signal may be one that had done nothing (replaced); any other exit is the indexer's end. */
  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.child) return;
    const why = `recording indexer exited (${signal ?? `code ${code}`})`;
    if (signal !== null && START_UP_SIGNALS.includes(signal)) this.replace(why);
    else this.die(why);
  }

  /** The child has gone before it had done anything: another takes the same spool ({@link MAX_RESPAWNS} at most), else this is the end. */
  private replace(why: string): void {
    if (this.opened || this.position > 0 || this.dead || this.respawns >= MAX_RESPAWNS) return this.die(why);
    this.respawns++;
    this.opts.logger.debug(`${why} while starting up; starting another on the same spool`);
    this.startChild(true);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The child has opened the recording (or failed to). */
  get opened(): boolean {
    return this.isOpen;
  }

  /** False once the child has gone (closed, or died): nothing more will be indexed. */
  get alive(): boolean {
    return this.dead === undefined;
  }

  /** How far the spool is in the recording (bytes of spool). */
  get indexed(): number {
    return this.position;
  }

  /** The spool is readable up to `end` (`waitingForRoom`: batches wait for room in it); said at most once per SPOOLED_EVERY_MS. */
  spooled(end: number, waitingForRoom = false): void {
    if (!this.dead && !this.closing) this.notices.note(end, waitingForRoom);
  }

  /**
   * Before this process exits on a signal (its 'exit' events wait for the event loop): a child that
   * died unheard, or that still loads (no handler for SIGHUP yet: Node itself catches SIGINT and
   * SIGTERM from its first instruction, only to die of them), is replaced now: the group signal that
   * stops the tap is killing it too, perhaps not visibly yet. One still loading has done nothing.
   */
  beforeExit(): void {
    const child = this.child;
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const gone = unreapedExit(child.pid);
    if (gone) return this.exited(child, gone.code, gone.signal);
    if (this.opened || this.position > 0 || catchesSignal(child.pid, 'SIGHUP') !== false) return;
    child.kill('SIGKILL');
    this.replace('recording indexer exited (still loading as the tap exits)');
  }

  /** {@link spooled}, said at once. */
  spooledNow(end: number, waitingForRoom = false): void {
    if (this.dead || this.closing) return;
    this.replay.spooled = { type: 'spooled', end, ...(waitingForRoom ? { waitingForRoom: true } : {}) };
    this.post(this.replay.spooled);
    this.journaled(end);
  }

  /** The tap's slot of the journal (tap-journal.ts): how far it spooled. */
  private journaled(end: number): void {
    this.journal?.write(`${selfFields('tap')} started ${this.replay.start.clockOrigin.epochUs} spooled ${end}`);
  }

  /** Indexes the rest of the spool (up to `end`), ends the recording at `endedUs` (marked `incomplete` if given), stops the child. */
  close(end: number, endedUs: number, incomplete?: string): Promise<string[]> {
    this.closing ??= new Promise<string[]>((resolve) => {
      this.closedWith = resolve;
      this.notices.cancel();
      this.closeEnd = end;
      this.journaled(end);
      if (this.dead) return this.closedAs([this.incompleteLine(this.dead)]);
      this.stopYielding();
      this.replay.close = { type: 'close', end, endedUs, ...(incomplete ? { incomplete } : {}) };
      this.post(this.replay.close);
    });
    return this.closing;
  }

  /**
   * Traffic is over: every thread of the child is raised at once (it may still be loading), and it is told, so that it
   * does not lower itself when it reads `start` only now.
   */
  stopYielding(): void {
    if (this.child.pid === undefined || this.dead || this.stoppedYielding) return;
    this.stoppedYielding = true;
    restoreChildPriority(this.child.pid);
    // Released (stdin closed): the child raises itself, as when the tap is gone.
    if (!this.child.stdin!.destroyed) this.post({ type: 'stop-yielding' });
  }

  /** Gives up on the child (it stopped making progress): the recording ends where it got to. */
  abandon(why: string): void {
    if (this.dead) return;
    this.child.kill('SIGKILL');
    this.die(why);
  }

  /** The child keeps this process running no longer (whoever needs the recording waits for it otherwise). */
  unref(): void {
    this.unrefd = true;
    this.child.unref();
    (this.child.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  /** One message on the child's stdin: [u32 length][v8-serialized]. */
  private post(m: ToIndexer): void {
    const body = serialize(m);
    const frame = Buffer.allocUnsafe(4 + body.length);
    frame.writeUInt32LE(body.length, 0);
    body.copy(frame, 4);
    try {
      this.child.stdin!.write(frame);
    } catch (err) {
      this.die(`cannot reach the recording indexer: ${(err as Error).message}`);
    }
  }

  private onMessage(m: FromIndexer): void {
    if (m.type === 'ready') this.openedAs();
    else if (m.type === 'failed') {
      this.openedAs(fromWireError(m, 'MCPTAP_INDEXER'));
      this.child.kill();
      this.die(m.message, false);
    } else if (m.type === 'indexed') {
      this.position = m.position;
      this.opts.onIndexed?.(m.position);
    } else if (m.type === 'fatal') this.opts.onFatal?.(new Error(m.message));
    else if (m.type === 'closed') {
      this.recorderDropped = m.dropped ?? 0;
      this.journal?.close(true);
      this.closedAs(m.lines);
    }
  }

  /** News: the recording is open (no `err`), or cannot be. Once; false if said before. */
  private openedAs(err?: McptapError): boolean {
    if (this.isOpen) return false;
    this.isOpen = true;
    if (err) this.settleReady.reject(err);
    else this.settleReady.resolve();
    return true;
  }

  /** News: the recording is closed (or given up on, `why`), with what the close said. */
  private closedAs(lines: string[], why = 'closed'): void {
    this.dead ??= why;
    const done = this.closedWith;
    this.closedWith = undefined;
    done?.(lines);
  }

  /** The child has gone: said once; whoever waits for room in the spool hears that no more will come. */
  private die(why: string, say = true): void {
    if (this.dead) return;
    this.dead = why;
    this.notices.cancel();
    // It never opened the recording: that is the start's failure, said by whoever waits for `ready`.
    if (this.openedAs(new McptapError('MCPTAP_INDEXER', `cannot start the recording indexer: ${why}`))) say = false;
    if (say) this.opts.logger.error(`${why}; the recording stops here (traffic goes on unrecorded, counted)`);
    if (say && this.opts.sinks.requireRecording) this.opts.onFatal?.(new Error(why));
    this.opts.onIndexed?.(this.position);
    // This process says what the recording lacks (and exits 1): the journal need not.
    this.journal?.close(true);
    this.closedAs([this.incompleteLine(why)], why);
  }

  /** Bytes of spool a dead indexer left out: everything spooled past what it had indexed. */
  lostBytes(): number {
    return this.dead === undefined || this.dead === 'closed' ? 0 : Math.max(0, (this.closeEnd ?? this.notices.last) - this.position);
  }

  private incompleteLine(why: string): string {
    const dropped = this.lostBytes();
    return `recording incomplete: ${why}${dropped > 0 ? `; ${dropped} bytes of traffic spooled before then were dropped (never indexed)` : ''}`;
  }
}

/**
 * "Spooled up to `end`", said at most once per {@link SPOOLED_EVERY_MS} (the first time at once, then what came since in
 * one message); batches starting to wait for room are said at once.
 */
class SpooledNotices {
  private end = 0;
  private waitingForRoom = false;
  private at = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly say: (end: number, waitingForRoom: boolean) => void) {}

  /** The last end noted (said or not yet). */
  get last(): number {
    return this.end;
  }

  note(end: number, waitingForRoom: boolean): void {
    const nowWaiting = waitingForRoom && !this.waitingForRoom;
    this.end = end;
    this.waitingForRoom = waitingForRoom;
    if (this.timer && !nowWaiting) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const wait = nowWaiting ? 0 : this.at + SPOOLED_EVERY_MS - performance.now();
    if (wait <= 0) this.sayNow();
    else {
      this.timer = setTimeout(this.sayNow, wait);
      this.timer.unref();
    }
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly sayNow = (): void => {
    this.timer = undefined;
    this.at = performance.now();
    this.say(this.end, this.waitingForRoom);
  };
}
