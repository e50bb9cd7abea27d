/**
 * Recordings from several files (several tap instances) into one store. Each recording stays a
 * recording of its own, with a new id in the output and its original transport, target, times and
 * meta (plus `meta.merged`: where it came from). Its TapEvent stream is copied through the
 * store's one write path in recorder order, so every exchange, frame and anomaly is as recorded.
 */
import { McptapError } from '../errors.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { OrderedEvent } from '../store/types.js';
import { eventTimeUs } from '../model/events.js';

export interface MergeSource {
  /** Shown in errors and kept in `meta.merged.file`. */
  file: string;
  store: RecordingStore;
}

export interface MergedRecording {
  file: string;
  from: number;
  to: number;
  events: number;
  /** The source was not closed (its tap still running, or killed): the copy ends at its last event. */
  notClosed?: true;
  /** Why the copy may lack traffic, as `mcptap ls` says it (INCOMPLETE). */
  incomplete?: string;
}

/** Why a copy of a recording that was not closed is INCOMPLETE (`mcptap ls`). */
export const NOT_CLOSED_WHEN_MERGED = 'not closed when merged (its tap was still running, or it or its indexer was killed)';

const BATCH = 5000;

/** Copies every recording of every source into `out`, sources in order, recordings by id. */
export function mergeRecordings(sources: readonly MergeSource[], out: RecordingStore): MergedRecording[] {
  const merged: MergedRecording[] = [];
  for (const src of sources) {
    for (const r of src.store.listRecordings()) merged.push(copyRecording(src, r.id, out));
  }
  return merged;
}

function copyRecording(src: MergeSource, id: number, out: RecordingStore): MergedRecording {
  const info = src.store.getRecording(id)!;
  const to = out.beginRecording({
    transport: info.transport,
    target: info.target,
    startedUs: info.startedUs,
    mcptapVersion: info.mcptapVersion,
    meta: { ...info.meta, merged: { file: src.file, recording: id } },
  });
  let batch: OrderedEvent[] = [];
  let events = 0;
  let lastUs = info.startedUs;
  const write = () => {
    const r = out.writeEvents(to, batch);
    if (r.rejected > 0) {
      throw new McptapError(
        'MCPTAP_MERGE_RECORDINGS_INVALID',
        `${src.file}: recording ${id}: ${r.rejected} events could not be copied (${r.firstError?.message ?? 'bad rows'})`,
      );
    }
    batch = [];
  };
  for (const event of src.store.events(id)) {
    batch.push({ ord: ++events, event });
    lastUs = Math.max(lastUs, eventTimeUs(event) ?? lastUs);
    if (batch.length >= BATCH) write();
  }
  if (batch.length > 0) write();
  // The meta (incomplete, if it was) came along above; only the row's end facts remain.
  if (info.endedUs !== undefined) {
    out.endRecording(to, { endedUs: info.endedUs, droppedQueue: info.droppedQueue, droppedWrite: info.droppedWrite });
    const why = info.meta?.incomplete;
    return { file: src.file, from: id, to, events, ...(typeof why === 'string' ? { incomplete: why } : {}) };
  }
  // No tap will ever close the copy: it ends at its last event, and says why it may lack traffic.
  const incomplete = typeof info.meta?.incomplete === 'string' ? info.meta.incomplete : NOT_CLOSED_WHEN_MERGED;
  out.endRecording(to, { endedUs: lastUs, droppedQueue: info.droppedQueue, droppedWrite: info.droppedWrite, incomplete });
  return { file: src.file, from: id, to, events, notClosed: true, incomplete };
}
