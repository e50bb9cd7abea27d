/**
 * `mcptap replay --update FILE`: the replay's own traffic recorded as a normal mcptap recording, the
 * next baseline. The messages the replayer sends and receives go through the same pipeline as a
 * tap's (decoder, correlator, redaction) into the same recorder sink, so `ls`, `show` and `replay`
 * read it like any other recording. Written to a temporary file, renamed into place on success only.
 * A `.jsonl` file gets a text baseline instead (jsonl-baseline.ts): stamped with the recorded times,
 * so that two updates against the same server write the same bytes.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import type { Transport } from '../model/events.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { Redactor } from '../redact/redactor.js';
import { SqliteRecorder } from '../sinks/sqlite-recorder.js';
import { systemClock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { VERSION } from '../version.js';
import { McptapError } from '../errors.js';
import { moveIntoPlace, removeTemp, tempFor } from '../util/atomic-file.js';
import { isSqliteFile } from '../store/recording-file-precheck.js';
import { RecordingStore } from '../store/recording-store.js';
import type { TrafficObserver } from './replay-traffic.js';
import { baselineJsonl, isJsonlBaseline, isJsonlPath } from '../interchange/jsonl-baseline.js';
import { RecordedTimes } from './recorded-times.js';
import { pipelineObserver } from './pipeline-observer.js';

export interface UpdateRecording extends TrafficObserver {
  /** Completes the file and moves it to its place. */
  commit(): Promise<void>;
  /** After commit: the file that was there before and is replaced (a recording: how many it held; else 0). */
  readonly replaced: { recordings: number } | undefined;
  /** Removes the temporary file (the replay failed). */
  abandon(): Promise<void>;
}

/**
 * `overwrite`: a file already at `file` may be replaced; without it, one that appeared during the replay is refused.
 * `recordedStartUs`: when the replayed recording started, where a text baseline's times start.
 */
export function openUpdateRecording(
  file: string,
  opts: { transport: Transport; target: string; overwrite: boolean; logger?: Logger; recordedStartUs?: number },
): UpdateRecording {
  const temp = tempFor(file);
  const times = isJsonlPath(file) ? new RecordedTimes(opts.recordedStartUs ?? 0) : undefined;
  const clock = times ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  let recorder: SqliteRecorder;
  try {
    recorder = new SqliteRecorder({
      path: temp,
      recording: { transport: opts.transport, target: opts.target, startedUs: clock.nowUs(), mcptapVersion: VERSION, meta: { replay: true } },
      logger,
      clock,
      redactor: new Redactor({ fields: [], headers: [], key: randomBytes(32) }),
    });
  } catch (err) {
    removeTemp(temp);
    throw new McptapError('MCPTAP_REPLAY_WRITE_FAILED', `cannot write --update ${file}: ${(err as Error).message}`);
  }
  const pipeline = new Pipeline({ clock, logger, tickMs: 0 });
  pipeline.addSink(recorder);
  const finish = async () => {
    await pipeline.flush();
    await pipeline.close();
  };
  let replaced: { recordings: number } | undefined;
  return {
    get replaced() {
      return replaced;
    },
    ...pipelineObserver(pipeline, { transport: opts.transport, target: opts.target, ...(times && { times }) }),
    commit: async () => {
      await finish();
      const lost = recorder.stats();
      if (lost.droppedQueue + lost.droppedWrite > 0) {
        removeTemp(temp);
        throw new McptapError(
          'MCPTAP_REPLAY_WRITE_FAILED',
          `--update ${file} not written: ${lost.droppedQueue + lost.droppedWrite} events could not be recorded`,
        );
      }
      if (existsSync(file)) {
        if (!opts.overwrite) {
          removeTemp(temp);
          throw new McptapError('MCPTAP_BAD_FLAG', `--update ${file} appeared during the replay; not replaced (pass --force to replace it)`);
        }
        replaced = { recordings: recordingsIn(file) };
      }
      const text = times ? tempFor(file) : undefined;
      try {
        if (text) writeFileSync(text, baselineJsonl(temp));
        await moveIntoPlace(text ?? temp, file); // through a symlink, its file; a pipe gets a copy
      } catch (err) {
        removeTemp(temp);
        if (text) removeTemp(text);
        throw new McptapError('MCPTAP_REPLAY_WRITE_FAILED', `cannot write --update ${file}: ${(err as Error).message}`);
      }
      removeTemp(temp); // its side files (the file itself was moved), or the recording a text baseline was written from
    },
    abandon: async () => {
      await finish().catch(() => undefined);
      removeTemp(temp);
    },
  };
}

/** How many recordings a file holds (0: not a recording; a text baseline holds one), read before it is replaced. */
function recordingsIn(file: string): number {
  if (!isSqliteFile(file)) return isJsonlBaseline(file) ? 1 : 0;
  try {
    const store = RecordingStore.open(file);
    try {
      return store.listRecordings().length;
    } finally {
      store.close();
    }
  } catch {
    return 0;
  }
}
