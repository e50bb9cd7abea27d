/**
 * Builds TapEvent streams the way the pipeline does: JSON-RPC bytes go through the real frame
 * parser and the real Correlator, so exchanges carry exactly the fields the live pipeline gives
 * them (progress points, cancel info, SSE timings, session ids, learned protocol versions).
 * Times are explicit (ms after T0) so span timestamps can be checked exactly.
 */
import { Correlator, type StreamEnd } from '../../src/correlate/correlator.js';
import type { ConnectionInfo, TapEvent } from '../../src/model/events.js';
import type { Exchange } from '../../src/model/exchange.js';
import type { Channel, Direction, FrameContext } from '../../src/model/frame.js';
import { counter, parseMessageBytes } from '../../src/parse/frame-parser.js';

export const T0 = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z in µs
export const us = (ms: number): number => T0 + Math.round(ms * 1000);

export class TrafficScript {
  readonly events: TapEvent[] = [];
  private readonly correlator = new Correlator({ cancelGraceUs: 1_000_000 });
  private readonly seq = counter(1);

  constructor(readonly connectionId = 'conn-1') {}

  open(info: Omit<ConnectionInfo, 'connectionId'>, atMs = 0): this {
    this.events.push({ type: 'connection-opened', timeUs: us(atMs), connection: { connectionId: this.connectionId, ...info } });
    return this;
  }

  /** One message (object or raw JSON text) in one direction. */
  send(direction: Direction, message: unknown, atMs: number, opts: { channel?: Channel; context?: FrameContext } = {}): TapEvent[] {
    const raw = Buffer.from(typeof message === 'string' ? message : JSON.stringify(message));
    const frames = parseMessageBytes(
      raw,
      { connectionId: this.connectionId, direction, channel: opts.channel ?? 'stdio', timeUs: us(atMs), ...(opts.context ? { context: opts.context } : {}) },
      this.seq,
    );
    const out: TapEvent[] = [];
    for (const f of frames) this.correlator.push(f, out);
    this.events.push(...out);
    return out;
  }

  request(
    id: string | number,
    method: string,
    params: Record<string, unknown> | undefined,
    atMs: number,
    opts: { direction?: Direction; channel?: Channel; context?: FrameContext } = {},
  ): Exchange {
    const out = this.send(opts.direction ?? 'c2s', { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }, atMs, opts);
    const started = out.find((e) => e.type === 'exchange-started');
    if (!started || started.type !== 'exchange-started') throw new Error('the correlator did not start an exchange');
    return started.exchange;
  }

  result(id: string | number, result: unknown, atMs: number, opts: { direction?: Direction; channel?: Channel; context?: FrameContext } = {}): void {
    this.send(opts.direction ?? 's2c', { jsonrpc: '2.0', id, result }, atMs, opts);
  }

  error(
    id: string | number,
    code: number,
    message: string,
    atMs: number,
    opts: { direction?: Direction; channel?: Channel; context?: FrameContext } = {},
  ): void {
    this.send(opts.direction ?? 's2c', { jsonrpc: '2.0', id, error: { code, message } }, atMs, opts);
  }

  endStream(streamId: string, end: Omit<StreamEnd, 'timeUs'>, atMs: number): void {
    this.correlator.endStream(this.connectionId, streamId, { ...end, timeUs: us(atMs) }, this.events);
  }

  tick(atMs: number): void {
    this.correlator.tick(us(atMs), this.events);
  }

  close(atMs: number, reason = 'exited with code 0', exitCode: number | null = 0): this {
    this.correlator.close(this.connectionId, us(atMs), undefined, this.events);
    this.events.push({ type: 'connection-closed', timeUs: us(atMs), connectionId: this.connectionId, reason, exitCode });
    return this;
  }

  /** The legacy handshake (initialize + initialized), answered with `version`. */
  handshake(atMs: number, version = '2025-11-25'): void {
    this.request(0, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'test-host', version: '1.0.0' } }, atMs);
    this.result(0, { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: 'test-server', version: '1.0.0' } }, atMs + 2);
    this.send('c2s', { jsonrpc: '2.0', method: 'notifications/initialized' }, atMs + 3);
  }

  completed(): Exchange[] {
    return this.events.flatMap((e) => (e.type === 'exchange-completed' ? [e.exchange] : []));
  }
}
