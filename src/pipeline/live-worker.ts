/**
 * The pipeline worker thread, where live telemetry runs (pipeline-thread-entry.ts), as the side path
 * sees it: booted late (at the server's first answer or a deadline), fed batches in order, closed.
 * Invariants: each batch handed over is settled once (acknowledged, or dropped with the worker); the
 * thread keeps the process up only while starting, closing, or holding batches; its death is said once.
 */
import { Worker } from 'node:worker_threads';
import { fromWireError, McptapError } from '../errors.js';
import { systemClockOrigin } from '../util/clock.js';
import type { Logger, LogLevel } from '../util/logger.js';
import { threadEntry } from '../util/thread-entry.js';
import type { RecordingOptions } from './recording-options.js';
import type { FromWorker, PipelineWorkerData, ToWorker, WorkerSinkOptions } from './worker-wire.js';

/** The options of a side path (side-path.ts), and of its worker. */
export interface SidePathOptions {
  /** The sinks' settings; one span-id seed for the live spans and the recording, so `mcptap export` reproduces the live ids. */
  sinks: WorkerSinkOptions & { spanIdSeed: string };
  logger: Logger;
  logLevel: LogLevel;
  maxLineBytes?: number;
  /** Bytes queued, waiting for the spool or in the worker's hands before input is dropped (default 64 MiB). */
  maxQueueBytes?: number;
  /** Worker thread niceness (Linux; default 0). */
  nice?: number;
  /** Record: spool on this thread, indexed into SQLite by the indexer process (recording.ts). */
  recording?: RecordingOptions;
  /** Recording failed with --require-recording: the tap should stop. */
  onFatal?: (err: Error) => void;
  /** Boot the worker when the server first answers or after this many ms, not at once: its start-up would compete with the server's. */
  bootDeadlineMs?: number;
}

export type Batch = Extract<ToWorker, { type: 'batch' }>;

export interface LiveWorkerHooks {
  /** The worker is done with batch `seq` (acknowledged it, or is gone). */
  settled(seq: number): void;
  /** The worker is gone: live telemetry stopped. */
  died(why: string): void;
}

export class LiveWorker {
  private worker: Worker | undefined;
  private bootTimer: NodeJS.Timeout | undefined;
  private bootImmediate = false;
  /** Batches handed over before the worker was booted, in order. */
  private readonly held: Batch[] = [];
  /** Batches posted and not yet acknowledged. */
  private readonly inHands = new Set<number>();
  /** The Prometheus scrape URL, once the worker serves one (see `ready`). */
  metricsUrl: string | undefined;
  /** Resolves once the sinks are open; rejects (MCPTAP_*) when they cannot be, unless a recording goes on beside. */
  readonly ready: Promise<void>;
  private settleReady!: { resolve: () => void; reject: (err: McptapError) => void };
  /** The worker answered `ready` or `failed` (or died first). */
  private started = false;
  /** Why the worker is gone. */
  dead: string | undefined;
  private closedWith: ((lines: string[]) => void) | undefined;
  private gotClosed = false;

  constructor(
    private readonly opts: SidePathOptions,
    private readonly hooks: LiveWorkerHooks,
  ) {
    this.ready = new Promise<void>((resolve, reject) => (this.settleReady = { resolve, reject }));
    this.ready.catch(() => {});
    if (opts.bootDeadlineMs === undefined) this.boot();
    else {
      this.bootTimer = setTimeout(() => this.boot(), opts.bootDeadlineMs);
      this.bootTimer.unref();
    }
  }

  /** The server answered: boot once the answer is on its way (not inside the tap's forwarding turn). */
  bootSoon(): void {
    if (this.bootImmediate || this.worker) return;
    this.bootImmediate = true;
    setImmediate(() => this.boot());
  }

  /** Hands a batch over: posted, held until the worker boots, or settled at once when it is gone. */
  send(b: Batch): void {
    if (this.dead) this.hooks.settled(b.seq);
    else if (this.worker) this.post(b);
    else this.held.push(b);
  }

  /** Lets the worker finish every batch handed over, close its sinks and exit; the lines worth telling the user. */
  close(): Promise<string[]> {
    return new Promise<string[]>((resolve) => {
      this.closedWith = resolve;
      this.boot();
      if (this.dead) return resolve([]);
      this.post({ type: 'close' });
    });
  }

  /** Starts the worker (once): at once, at the server's first answer, or at the boot deadline. */
  private boot(): void {
    if (this.worker || this.dead) return;
    clearTimeout(this.bootTimer);
    const o = this.opts;
    const workerData: PipelineWorkerData = {
      sinks: o.sinks,
      logLevel: o.logLevel,
      clockOrigin: systemClockOrigin,
      nice: o.nice ?? 0,
      besideRecording: o.recording !== undefined,
      maxLineBytes: o.maxLineBytes,
    };
    const entry = threadEntry(import.meta.url, 'pipeline-thread-entry');
    const worker = new Worker(entry, { workerData, stdout: false, stderr: false });
    this.worker = worker;
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    worker.on('error', (err) => {
      if (!this.started) this.failStart(new McptapError('MCPTAP_PIPELINE_WORKER', `cannot start the pipeline thread: ${err.message}`));
      else this.die(`pipeline thread failed: ${err.message}`);
    });
    worker.on('exit', (code) => {
      if (!this.started) this.failStart(new McptapError('MCPTAP_PIPELINE_WORKER', `the pipeline thread exited (code ${code}) before its sinks were open`));
      else if (!this.gotClosed) this.die(`pipeline thread exited (code ${code})`);
    });
    for (const b of this.held.splice(0)) this.post(b);
  }

  private post(msg: ToWorker): void {
    try {
      if (msg.type === 'batch') this.inHands.add(msg.seq);
      this.keepUp();
      this.worker!.postMessage(msg, msg.type === 'batch' ? [msg.bytes] : []);
    } catch (err) {
      this.die(`cannot reach the pipeline thread: ${(err as Error).message}`);
    }
  }

  /** Referenced while starting (a caller may wait for `ready`), closing, or holding batches. */
  private keepUp(): void {
    if (!this.started || this.closedWith || this.inHands.size > 0) this.worker?.ref();
    else this.worker?.unref();
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'ready') {
      this.started = true;
      this.metricsUrl = m.metricsUrl;
      this.keepUp();
      this.settleReady.resolve();
    } else if (m.type === 'failed') {
      this.failStart(fromWireError(m, 'MCPTAP_PIPELINE_WORKER'), true);
    } else if (m.type === 'log') {
      process.stderr.write(m.line);
    } else if (m.type === 'ack') {
      this.inHands.delete(m.seq);
      this.hooks.settled(m.seq);
      this.keepUp();
    } else if (m.type === 'closed') {
      this.gotClosed = true;
      this.closedWith?.(m.lines);
      // All that matters is done: telemetry was flushed or its close deadline passed. Exports the
      // deadline abandoned (an OTLP endpoint that is down retries for seconds) must not keep the process alive.
      void this.worker?.terminate();
    }
  }

  /**
   * The sinks could not be opened. Beside a recording the worker said why and the recording goes
   * on; otherwise `ready` rejects, and whoever waits for it says why.
   */
  private failStart(err: McptapError, saidByWorker = false): void {
    if (this.dead) return;
    this.started = true;
    const beside = this.opts.recording !== undefined;
    this.die(err.message, beside && !saidByWorker);
    if (beside) this.settleReady.resolve();
    else this.settleReady.reject(err);
    void this.worker?.terminate();
  }

  private die(why: string, say = true): void {
    if (this.dead) return;
    this.dead = why;
    if (say) {
      const still = this.opts.recording ? 'the recording goes on' : 'traffic is still forwarded, but no longer observed (drops counted)';
      this.opts.logger.error(`${why}; ${still}`);
    }
    for (const b of this.held.splice(0)) this.hooks.settled(b.seq);
    for (const seq of this.inHands) this.hooks.settled(seq);
    this.inHands.clear();
    this.hooks.died(why);
    this.closedWith?.([]);
  }
}
