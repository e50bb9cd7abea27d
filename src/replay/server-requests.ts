/**
 * The new server's own requests during a replay (sampling, elicitation, roots/list, ping): answered
 * from the recording (server-answers.ts) wherever they arrive: in a request's stream (HTTP), on
 * stdio, or on the legacy HTTP session's standalone GET stream, held from `initialized` on as the SDK
 * clients hold it. One the recording cannot answer is charged to the step it came in (or the oldest
 * in flight) and reported with that step.
 */
import type { McpSession } from '../client/mcp-session.js';
import { holdServerStream, type HeldServerStream } from '../client/server-stream.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../model/jsonrpc.js';
import type { ReplayTraffic } from './replay-traffic.js';
import type { TargetConnection } from './replay-target.js';
import type { ServerAnswers } from './server-answers.js';

/** What of a replay session the answering needs. */
export interface AnsweringSession {
  /** The replay session's key (replay-plan.ts). */
  key: string;
  conn: TargetConnection;
  session: McpSession;
  /** Steps in flight in it. */
  inFlight: Set<number>;
  /** Legacy HTTP: the standalone GET stream, once held. */
  serverStream?: HeldServerStream;
}

export class ServerRequests {
  /** Step -> the methods of the server requests the recording could not answer. */
  private readonly unexpected = new Map<number, string[]>();

  constructor(
    private readonly answers: ServerAnswers,
    private readonly traffic: ReplayTraffic,
    private readonly openTimeoutMs: number,
  ) {}

  /** A message in step `step`'s stream; over HTTP a server request there is answered (stdio's client calls {@link answer} itself). */
  inStep(live: AnsweringSession, step: number, m: JsonRpcMessage, t: number, recordedUs?: number): void {
    this.traffic.received(live.key, m, t, live.session.headerContext, recordedUs);
    if (live.conn.channel.transport === 'http' && 'method' in m && 'id' in m) {
      const res = this.answer(live, m as JsonRpcRequest, step);
      void live.conn.respond(res, live.session.headerContext).catch(() => undefined);
    }
  }

  /** The recorded answer to a server request; `step`: the step whose stream it came in (it was told then). */
  answer(live: AnsweringSession, req: JsonRpcRequest, step?: number): JsonRpcResponse {
    const a = this.answers.answer(req);
    const charged = step ?? [...live.inFlight].sort((x, y) => x - y)[0];
    if (!a.fromRecording && charged !== undefined) {
      const list = this.unexpected.get(charged) ?? [];
      list.push(req.method);
      this.unexpected.set(charged, list);
    }
    if (step === undefined) this.traffic.received(live.key, req, undefined, live.session.headerContext);
    this.traffic.sent(live.key, a.response, live.session.headerContext);
    return a.response;
  }

  /** Holds the session's GET stream (once; a no-op but for legacy HTTP); resolves once it opened, failed or timed out. */
  holdStream(live: AnsweringSession): Promise<void> {
    live.serverStream ??= holdServerStream(live.session, {
      answer: (req) => this.answer(live, req),
      onMessage: (m, t) => {
        if (!('method' in m && 'id' in m)) this.traffic.received(live.key, m, t, live.session.headerContext);
      },
      openTimeoutMs: this.openTimeoutMs,
    });
    return live.serverStream.opened;
  }

  /** The server requests charged to step `step`, forgotten once taken. */
  take(step: number): string[] {
    const list = this.unexpected.get(step) ?? [];
    this.unexpected.delete(step);
    return list;
  }
}
