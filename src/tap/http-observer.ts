/**
 * The HTTP tap's side path, tap-wide part: connection ids, sessions, and the one door into the
 * pipeline (with the 2026-07-28 header checks). Per-request work lives in {@link RequestObservation}.
 *
 * Connection ids: `http:<session id>` for everything of one session (Streamable HTTP `Mcp-Session-Id`,
 * or the `sessionId` of the deprecated HTTP+SSE transport), so server->client requests and their
 * POSTed answers correlate; `http:conn-<n>` for session-less requests, one per client TCP
 * connection (opened with its first such request, closed with the socket). Per TCP connection
 * rather than per request: it is what ConnectionInfo.peer describes, and it halves the events a
 * stateless request costs the sinks (HTTP/1.1 carries one request at a time per connection, so
 * ids cannot collide). Every HTTP request is one stream (`context.streamId` = its number).
 *
 * A session starts when first seen (normally the initialize response or the `endpoint` event) and
 * ends on a successful DELETE, a 404 for its id, the end of its legacy GET /sse stream, after
 * `sessionIdleMs` without use, or when the tap closes (then at its last use).
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { PipelineInput } from '../pipeline/pipeline-input.js';
import type { StreamEnd } from '../model/events.js';
import type { FrameOrigin } from '../model/frame.js';
import type { AnomalyKind, ConnectionInfo } from '../model/events.js';
import { TOKEN_PREFIX, type Redactor } from '../redact/redactor.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { connectionTokens, isHopByHop } from '../protocol/headers.js';
import { RequestObservation, type ObservationHost } from './request-observation.js';

export interface HttpObserverOptions {
  pipeline: PipelineInput;
  redactor: Redactor;
  /** The upstream URL, recorded with each connection. */
  target: string;
  clock: Clock;
  logger: Logger;
  /** Largest request body kept for the recording (bytes). */
  maxRecordBytes: number;
  /** Largest JSON response body kept for the recording (bytes); a larger one is forwarded, not recorded (anomaly). */
  maxRecordResponseBytes: number;
  /** A session unused this long is ended (ms; 0 = never). */
  sessionIdleMs: number;
}

interface Session {
  id: string;
  connectionId: string;
  lastUseUs: number;
  /** Streams left open in the correlator (answers travel elsewhere); ended with the session. */
  held: string[];
}

export class HttpObserver implements ObservationHost {
  readonly pipeline: PipelineInput;
  readonly clock: Clock;
  readonly maxRecordBytes: number;
  readonly maxRecordResponseBytes: number;
  private readonly opts: HttpObserverOptions;
  private seq = 0;
  private connSeq = 0;
  private readonly sessions = new Map<string, Session>();
  private readonly sockets = new WeakMap<Socket, string>();
  /** Socket connections opened and not yet closed in the pipeline; `close()` ends what is left. */
  private readonly openSocketConns = new Set<string>();
  private readonly sweepTimer: NodeJS.Timeout | undefined;

  constructor(opts: HttpObserverOptions) {
    this.opts = opts;
    this.pipeline = opts.pipeline;
    this.clock = opts.clock;
    this.maxRecordBytes = opts.maxRecordBytes;
    this.maxRecordResponseBytes = opts.maxRecordResponseBytes;
    if (opts.sessionIdleMs > 0) {
      this.sweepTimer = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1_000, opts.sessionIdleMs / 2)));
      this.sweepTimer.unref();
    }
  }

  begin(req: IncomingMessage, timeUs: number): RequestObservation {
    return new RequestObservation(this, req, ++this.seq, timeUs);
  }

  /** The connection of a session, opened on first sight; marks it used. */
  useSession(sessionId: string, timeUs: number, req: IncomingMessage): string {
    let s = this.sessions.get(sessionId);
    if (!s) {
      s = { id: sessionId, connectionId: `http:${sessionId}`, lastUseUs: timeUs, held: [] };
      this.sessions.set(sessionId, s);
      this.pipeline.openConnection({ connectionId: s.connectionId, transport: 'http', target: this.opts.target, sessionId, peer: peerOf(req) }, timeUs);
    }
    s.lastUseUs = timeUs;
    return s.connectionId;
  }

  /** The connection of a session-less request: one per client TCP connection, closed with it. */
  socketConnection(req: IncomingMessage, timeUs: number): string {
    const socket = req.socket;
    let id = this.sockets.get(socket);
    if (id === undefined) {
      const connectionId = `http:conn-${++this.connSeq}`;
      id = connectionId;
      this.sockets.set(socket, connectionId);
      this.pipeline.openConnection({ connectionId, transport: 'http', target: this.opts.target, peer: peerOf(req) }, timeUs);
      this.openSocketConns.add(connectionId);
      // After the socket's other 'close' listeners: each response's own close handler (added per
      // request, possibly after this one) must end its stream as cancelled before the connection
      // close would mark what is left unanswered.
      socket.once('close', () => {
        const timeUs = this.clock.nowUs();
        setImmediate(() => this.closeSocketConnection(connectionId, 'client_connection_closed', timeUs));
      });
    }
    return id;
  }

  /** Leave a stream's requests pending past the stream's end: their answers come on another stream. */
  hold(sessionId: string, streamId: string): void {
    this.sessions.get(sessionId)?.held.push(streamId);
  }

  /**
   * End a session. With `end`, requests still pending on its held streams end that way (the legacy
   * GET stream closed); otherwise the connection close marks them unanswered.
   */
  endSession(sessionId: string, reason: string, timeUs: number, end?: StreamEnd): void {
    const s = this.sessions.get(sessionId);
    if (!s) return;
    this.sessions.delete(sessionId);
    if (end) for (const sid of s.held) this.pipeline.endStream(s.connectionId, sid, end);
    this.pipeline.closeConnection(s.connectionId, { reason, timeUs });
    // Free the correlator's stream entries (a no-op for exchanges already completed).
    if (!end) for (const sid of s.held) this.pipeline.endStream(s.connectionId, sid, { outcome: 'transport_error', errorClass: 'session_ended', timeUs });
  }

  /** Push a request body (the pipeline checks its standard MCP headers against each message in it). */
  pushRequest(origin: FrameOrigin, raw: Buffer, headers: IncomingMessage['headers']): void {
    this.pipeline.pushRequest(origin, raw, headers);
  }

  /** The tap refused a request before forwarding it (Host/Origin check): recorded as an anomaly. */
  reject(detail: string, timeUs: number): void {
    this.anomaly('protocol_violation', 'http:rejected', detail, timeUs);
  }

  anomaly(kind: AnomalyKind, connectionId: string, detail: string, timeUs: number): void {
    this.pipeline.anomaly(kind, connectionId, detail, { direction: 'c2s', timeUs });
  }

  /** The request's headers for frame context: hop-by-hop dropped, secrets replaced by keyed-hash tokens. */
  contextHeaders(req: IncomingMessage): Record<string, string> {
    const h = req.headers;
    const listed = connectionTokens(h.connection);
    const redactor = this.opts.redactor;
    const out: Record<string, string> = {};
    for (const name in h) {
      const v = h[name];
      if (v === undefined || (name !== 'host' && isHopByHop(name, listed))) continue;
      const text = Array.isArray(v) ? v.join(', ') : v;
      out[name] = redactor.isSensitiveHeader(name) && !text.startsWith(TOKEN_PREFIX) ? redactor.token(text) : text;
    }
    return out;
  }

  /** Tap shutdown: every session still open ends at its last use. */
  close(): void {
    for (const s of [...this.sessions.values()]) this.endSession(s.id, 'tap_closed', s.lastUseUs);
    // Sockets whose deferred close has not run yet: end them now, so the caller can close the sinks.
    for (const id of [...this.openSocketConns]) this.closeSocketConnection(id, 'tap_closed', this.clock.nowUs());
    if (this.sweepTimer) clearInterval(this.sweepTimer);
  }

  private closeSocketConnection(connectionId: string, reason: string, timeUs: number): void {
    if (!this.openSocketConns.delete(connectionId)) return;
    this.pipeline.closeConnection(connectionId, { reason, timeUs });
  }

  get openSessions(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const cutoff = this.clock.nowUs() - this.opts.sessionIdleMs * 1000;
    for (const s of [...this.sessions.values()]) if (s.lastUseUs < cutoff) this.endSession(s.id, 'idle', s.lastUseUs);
  }
}

function peerOf(req: IncomingMessage): NonNullable<ConnectionInfo['peer']> {
  const { remoteAddress, remotePort } = req.socket;
  return { ...(remoteAddress ? { address: remoteAddress } : {}), ...(remotePort ? { port: remotePort } : {}), httpVersion: req.httpVersion };
}
