/**
 * The request body on its way upstream, when it has not fully arrived by the time it is forwarded
 * (a body already in memory goes as one Buffer: see Forwarder). A Readable that the upstream client
 * consumes, fed from the client's IncomingMessage with backpressure, which also hands each chunk to
 * the side path.
 *
 * Why not give `req` to the upstream client directly: on an upstream failure the client library
 * destroys the body stream it was given, and destroying an IncomingMessage kills the client's
 * socket, so the tap could no longer answer 502. Here only this wrapper is destroyed; `req` stays
 * readable, and `detach()` keeps reading it for the recording after forwarding stopped.
 *
 * Invariant: chunk and end hooks fire exactly once per byte / once per body, whether or not the
 * bytes were forwarded; nothing past `maxBytes` is kept (the `tooLarge` hook fires instead).
 */
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../util/clock.js';

/** Methods (not closures: one object per request, the forwarder, implements them). */
export interface BodyHooks {
  bodyChunk(chunk: Buffer): void;
  bodyEnd(timeUs: number): void;
  /** The body passed `maxBytes`; reading stops. */
  bodyTooLarge(): void;
}

export class RequestBodyPump extends Readable {
  private total = 0;
  private forwarding = true;
  private over = false;
  private complete = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly hooks: BodyHooks,
    private readonly maxBytes: number,
    private readonly clock: Clock,
  ) {
    super({ highWaterMark: 64 * 1024 });
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('close', this.onClose);
  }

  /** Whether the whole body was read. */
  get ended(): boolean {
    return this.complete;
  }

  override _read(): void {
    if (this.req.isPaused() && !this.over) this.req.resume();
  }

  /** Stop forwarding (the upstream request is gone) but keep reading the body for the recording. */
  detach(): void {
    this.forwarding = false;
    if (!this.over && !this.complete) this.req.resume();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.over) return;
    this.total += chunk.length;
    if (this.total > this.maxBytes) {
      this.over = true;
      this.req.pause();
      this.hooks.bodyTooLarge();
      if (!this.destroyed) this.destroy(new BodyTooLargeError(this.maxBytes));
      return;
    }
    if (this.forwarding && !this.destroyed && !this.push(chunk)) this.req.pause();
    this.hooks.bodyChunk(chunk);
  };

  private readonly onEnd = (): void => {
    if (this.over) return;
    this.complete = true;
    this.hooks.bodyEnd(this.clock.nowUs());
    if (this.forwarding && !this.destroyed) this.push(null);
  };

  private readonly onClose = (): void => {
    // The client went away before sending the whole body: the upstream request must not complete.
    if (!this.complete && !this.over && !this.destroyed) this.destroy(new Error('client closed the connection while sending the request body'));
  };
}

export class BodyTooLargeError extends Error {
  readonly code = 'MCPTAP_BODY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}
