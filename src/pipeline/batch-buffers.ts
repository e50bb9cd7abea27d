/**
 * The buffers a {@link SidePath} fills, one per batch: ops' bytes are copied in as they come (still in cache), the ops
 * written after them; the batch is spooled, then transferred to the worker if live telemetry runs there. Buffers handed
 * back (spooled, with no worker to keep views of them) are reused, since fresh memory is page-faulted in: at most
 * {@link MAX_SPARE}, {@link MAX_SPARE_BYTES} together, the smallest giving way (figures: docs/performance.md, "The stdio
 * tap with `--record`").
 * Invariant: a buffer is the one being filled, a spare, or out (waiting for the spool, or the worker's); never two at once.
 */

/** Buffers are at least this big once they come back, with half again the need to spare above that. */
const MIN_BATCH_BUFFER = 256 * 1024;
const MAX_SPARE = 4;
const MAX_SPARE_BYTES = 16 * 1024 * 1024;

export class BatchBuffers {
  private readonly spare: ArrayBuffer[] = [];
  /** Buffers come back (not when the worker keeps views of them: live decoding). */
  private recycles = false;
  private batch: Buffer | undefined;
  private filled = 0;
  /** The last batch's size: what the next one is likely to need. */
  private lastSize = 0;

  /** Bytes appended to the batch being filled. */
  get length(): number {
    return this.filled;
  }

  append(data: Buffer): void {
    if (!this.batch || this.filled + data.length > this.batch.length) this.grow(data.length);
    this.filled += data.copy(this.batch!, this.filled);
  }

  /** Ends the batch and returns its whole buffer (it is transferred), with room for `tail` bytes after the appended ones. */
  finish(tail: number): Buffer {
    if (!this.batch || this.filled + tail > this.batch.length) this.grow(tail);
    const buf = this.batch!;
    this.lastSize = this.filled + tail;
    this.drop();
    return buf;
  }

  /** Forgets the batch being filled (nothing will take it). */
  drop(): void {
    this.batch = undefined;
    this.filled = 0;
  }

  /** A buffer nothing refers to any more: kept for reuse, unless the spares are full of ones at least as big. */
  handedBack(buffer: ArrayBuffer): void {
    this.recycles = true;
    this.keep(buffer);
  }

  /** Makes room for `more` bytes (at first the last batch's size and a quarter; then doubling), copying the bytes so far. */
  private grow(more: number): void {
    const old = this.batch;
    const need = Math.max(this.filled + more, old ? 2 * old.length : Math.ceil(this.lastSize * 1.25));
    const next = this.take(need);
    if (old) {
      old.copy(next, 0, 0, this.filled);
      // Never handed on: it can be reused like one that came back.
      if (this.recycles) this.keep(old.buffer as ArrayBuffer);
    }
    this.batch = next;
  }

  /** The smallest spare of at least `bytes`, else a new buffer (with room to spare once buffers come back). */
  private take(bytes: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.spare.length; i++) {
      const size = this.spare[i]!.byteLength;
      if (size >= bytes && (best < 0 || size < this.spare[best]!.byteLength)) best = i;
    }
    if (best >= 0) return Buffer.from(this.spare.splice(best, 1)[0]!);
    return Buffer.allocUnsafeSlow(this.recycles ? roomy(bytes) : bytes);
  }

  private keep(buffer: ArrayBuffer): void {
    if (buffer.byteLength > MAX_SPARE_BYTES / MAX_SPARE) return;
    if (this.spare.length < MAX_SPARE) {
      this.spare.push(buffer);
      return;
    }
    let smallest = 0;
    for (let i = 1; i < this.spare.length; i++) if (this.spare[i]!.byteLength < this.spare[smallest]!.byteLength) smallest = i;
    if (this.spare[smallest]!.byteLength < buffer.byteLength) this.spare[smallest] = buffer;
  }
}

/** A new reusable buffer's size: {@link MIN_BATCH_BUFFER} at least, else `bytes` and half again, in 64 KiB steps. */
function roomy(bytes: number): number {
  const step = 64 * 1024;
  return Math.max(MIN_BATCH_BUFFER, Math.ceil((bytes * 1.5) / step) * step);
}
