/**
 * Applies a batch of the worker wire's ops to a pipeline, in order: what the tap saw, replayed
 * where decoding runs (the pipeline worker live, the recording indexer from the spool). A batch's
 * bytes are viewed, never copied (frames keep views of the buffer).
 */
import type { Pipeline } from './pipeline.js';
import { Op, type WireOp } from './worker-wire.js';

/** Returns the latest time (µs) the ops carry, or 0 when none carries one. */
export function applyWireOps(pipeline: Pipeline, ops: WireOp[], bytes: Buffer): number {
  let at = 0;
  let latest = 0;
  const take = (len: number): Buffer => bytes.subarray(at, (at += len));
  for (const op of ops) {
    switch (op[0]) {
      case Op.Open:
        pipeline.openConnection(op[1], op[2]);
        latest = Math.max(latest, op[2]);
        break;
      case Op.Chunk:
        pipeline.pushChunk({ connectionId: op[1], direction: op[2], channel: op[3], timeUs: op[4], bytes: take(op[5]) });
        latest = Math.max(latest, op[4]);
        break;
      case Op.Message:
        pipeline.pushMessage(op[1], take(op[2]));
        latest = Math.max(latest, op[1].timeUs);
        break;
      case Op.Request:
        pipeline.pushRequest(op[1], take(op[2]), op[3]);
        latest = Math.max(latest, op[1].timeUs);
        break;
      case Op.EndStream:
        pipeline.endStream(op[1], op[2], op[3]);
        latest = Math.max(latest, op[3].timeUs);
        break;
      case Op.Anomaly:
        pipeline.anomaly(op[1], op[2], op[3], op[4]);
        latest = Math.max(latest, op[4].timeUs ?? 0);
        break;
      case Op.Close:
        pipeline.closeConnection(op[1], op[2]);
        latest = Math.max(latest, op[2].timeUs ?? 0);
        break;
      case Op.Gap:
        pipeline.gap(op[1], op[2], op[3], op[4]);
        latest = Math.max(latest, op[4].timeUs);
        break;
    }
  }
  return latest;
}
