/**
 * Applies a batch of worker-wire ops to a pipeline in order, where decoding runs (the live worker, or the indexer from the
 * spool). A batch's bytes are viewed, never copied: frames keep views of the buffer.
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
      case Op.LongStream:
        pipeline.longStream(op[1], op[2], op[3]);
        latest = Math.max(latest, op[3].timeUs);
        break;
    }
  }
  return latest;
}

/** Cuts a batch, in order, into ones of at most `maxBytes` bytes (the spool's limit): chunks are cut, messages never (a bigger one goes alone). */
export function splitWireBatch(ops: WireOp[], bytes: Buffer, maxBytes: number): { ops: WireOp[]; bytes: Buffer }[] {
  const out: { ops: WireOp[]; bytes: Buffer }[] = [];
  let cur: WireOp[] = [];
  let from = 0;
  let at = 0;
  const cut = () => {
    if (cur.length > 0) out.push({ ops: cur, bytes: bytes.subarray(from, at) });
    cur = [];
    from = at;
  };
  for (const op of ops) {
    if (op[0] === Op.Chunk) {
      let len = op[5];
      while (at - from + len > maxBytes) {
        const part = Math.max(0, maxBytes - (at - from));
        if (part > 0) cur.push([Op.Chunk, op[1], op[2], op[3], op[4], part]);
        at += part;
        len -= part;
        cut();
      }
      if (len > 0 || op[5] === 0) cur.push([Op.Chunk, op[1], op[2], op[3], op[4], len]);
      at += len;
      continue;
    }
    const len = op[0] === Op.Message || op[0] === Op.Request ? op[2] : 0;
    if (len > 0 && at - from + len > maxBytes) cut();
    cur.push(op);
    at += len;
  }
  cut();
  return out;
}
