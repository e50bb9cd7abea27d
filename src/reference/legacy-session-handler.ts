/**
 * The legacy (2024-11-05 … 2025-11-25) leg of the reference HTTP endpoint: STATEFUL Streamable
 * HTTP sessions, as the 2025 spec describes them and as SDK 1.x clients expect.
 *
 * Why hand-wired: the 2.x `createMcpHandler` serves legacy traffic only statelessly (no
 * `Mcp-Session-Id`, GET and DELETE answered 405). Its documented escape hatch is to route
 * `isLegacyRequest()` traffic to a sessionful `WebStandardStreamableHTTPServerTransport`, one per
 * session, which is what this class does. All protocol answers (400 before initialize, SSE
 * responses, the standalone GET stream, 409 for a second one, DELETE) are the SDK transport's.
 *
 * Invariant: `sessions` holds only initialized sessions, oldest first; at most `maxSessions`
 * (the oldest is closed to make room), so a load test that never DELETEs cannot exhaust memory.
 */
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport, type McpServerFactory, type McpServer, type Server } from '@modelcontextprotocol/server';
import type { Logger } from '../util/logger.js';

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer | Server;
}

export const DEFAULT_MAX_LEGACY_SESSIONS = 10_000;

export class LegacySessionHandler {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly factory: McpServerFactory,
    private readonly logger: Logger,
    private readonly maxSessions = DEFAULT_MAX_LEGACY_SESSIONS,
  ) {}

  /** Number of open sessions. */
  get size(): number {
    return this.sessions.size;
  }

  async fetch(request: Request): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId === null) return this.openSession(request);
    const session = this.sessions.get(sessionId);
    if (!session) return sessionNotFound();
    return session.transport.handleRequest(request);
  }

  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.server.close()));
  }

  /**
   * A request without a session id goes to a fresh transport + instance. If it was an
   * `initialize`, the transport minted a session and we keep it; otherwise the SDK has already
   * answered (400 "Server not initialized", 400 for a GET/DELETE, parse errors, …) and the
   * pair is discarded.
   */
  private async openSession(request: Request): Promise<Response> {
    const server = await this.factory({ era: 'legacy', requestInfo: request });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id: string): void => this.add(id, { transport, server }),
      onsessionclosed: (id: string): void => this.remove(id),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (transport.sessionId === undefined || !this.sessions.has(transport.sessionId)) await server.close();
    return response;
  }

  private add(id: string, session: Session): void {
    if (this.sessions.size >= this.maxSessions) {
      const [oldestId] = this.sessions.keys();
      if (oldestId !== undefined) {
        this.logger.warn(`reference: ${this.maxSessions} legacy sessions open; closing the oldest (${oldestId})`);
        this.remove(oldestId);
      }
    }
    this.sessions.set(id, session);
    this.logger.debug(`reference: legacy session ${id} opened`);
  }

  private remove(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    this.logger.debug(`reference: legacy session ${id} closed`);
    session.server.close().catch((err: Error) => this.logger.debug(`reference: closing session ${id}: ${err.message}`));
  }
}

/** What the SDK's own stateful transport answers for an unknown session: 404, JSON-RPC -32001. */
function sessionNotFound(): Response {
  const body = { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } };
  return new Response(JSON.stringify(body), { status: 404, headers: { 'content-type': 'application/json' } });
}
