/**
 * `--on-miss passthrough`: requests the recording does not hold are sent to a real Streamable
 * HTTP server and its answer (notifications and response, the caller's id kept) goes back to the
 * caller. 2026-07-28 requests (with the `_meta` envelope) are stateless and go as they are; a
 * legacy caller gets an upstream session of its own, opened on its first miss (initialize +
 * notifications/initialized) and ended when the mock's session ends.
 */
import { McpHttpClient, mcpHeaders, type CallResult } from '../client/index.js';
import { isRecord, type JsonRpcMessage, type JsonRpcRequest } from '../model/jsonrpc.js';
import { eraOfRequest, MODERN_PROTOCOL_VERSION } from '../protocol/mcp.js';
import type { Logger } from '../util/logger.js';
import { McptapError } from '../errors.js';

export interface ForwardOptions {
  /** The caller's session (an HTTP `Mcp-Session-Id`, or `stdio`): one upstream session each. */
  session: string;
  signal?: AbortSignal;
}

export interface MissForwarder {
  /** Sends the request upstream and everything it answers to `send`; a failure is answered as a JSON-RPC error. */
  forward(request: JsonRpcRequest, send: (m: JsonRpcMessage) => void, opts: ForwardOptions): Promise<void>;
  /** The caller's session ended: end its upstream session too. */
  endSession(session: string): Promise<void>;
  close(): Promise<void>;
}

/** JSON-RPC error for a miss the upstream could not answer (same range as the miss itself). */
export const MOCK_UPSTREAM_ERROR_CODE = -32089;

const LEGACY_VERSION = '2025-06-18';

interface UpstreamSession {
  id?: string;
  protocolVersion: string;
}

export class HttpMissForwarder implements MissForwarder {
  private readonly client: McpHttpClient;
  private readonly sessions = new Map<string, Promise<UpstreamSession>>();

  constructor(
    url: string | URL,
    private readonly logger: Logger,
    timeoutMs = 60_000,
  ) {
    this.client = new McpHttpClient({ url, connections: 8, timeoutMs });
  }

  async forward(request: JsonRpcRequest, send: (m: JsonRpcMessage) => void, opts: ForwardOptions): Promise<void> {
    try {
      const modern = modernVersion(request);
      const headers = modern
        ? mcpHeaders(request.method, request.params, { era: 'modern', protocolVersion: modern })
        : await this.legacyHeaders(request, opts.session);
      const result = await this.client.post(request, { headers, ...(opts.signal ? { signal: opts.signal } : {}), onMessage: (m) => send(m) });
      if (!result.response) send(upstreamError(request, `the upstream answered HTTP ${result.httpStatus ?? '?'} without a response`));
    } catch (err) {
      if (opts.signal?.aborted) return;
      this.logger.warn(`mock: passing ${request.method} through failed: ${(err as Error).message}`);
      send(upstreamError(request, (err as Error).message));
    }
  }

  async endSession(session: string): Promise<void> {
    const s = this.sessions.get(session);
    this.sessions.delete(session);
    const open = await s?.catch(() => undefined);
    if (!open?.id) return;
    await this.client.deleteSession({ 'mcp-session-id': open.id, 'mcp-protocol-version': open.protocolVersion }).catch(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.sessions.keys()].map((s) => this.endSession(s)));
    await this.client.close();
  }

  private async legacyHeaders(request: JsonRpcRequest, session: string): Promise<Record<string, string>> {
    if (request.method === 'initialize') return {};
    let s = this.sessions.get(session);
    if (!s) {
      s = this.open();
      this.sessions.set(session, s);
      s.catch(() => this.sessions.delete(session));
    }
    const open = await s;
    return mcpHeaders(request.method, request.params, { era: 'legacy', protocolVersion: open.protocolVersion, ...(open.id ? { sessionId: open.id } : {}) });
  }

  private async open(): Promise<UpstreamSession> {
    const init: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: 'mcptap-mock-init',
      method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'mcptap-mock', version: '1' } },
    };
    const r: CallResult = await this.client.post(init);
    const result = r.response?.result;
    if (!isRecord(result))
      throw new McptapError(
        'MCPTAP_MOCK_UPSTREAM_UNAVAILABLE',
        `the upstream refused initialize (HTTP ${r.httpStatus ?? '?'}${r.response?.error ? `: ${r.response.error.message}` : ''})`,
      );
    const protocolVersion = typeof result.protocolVersion === 'string' ? result.protocolVersion : LEGACY_VERSION;
    const headers = mcpHeaders('notifications/initialized', undefined, { era: 'legacy', protocolVersion, ...(r.sessionId ? { sessionId: r.sessionId } : {}) });
    await this.client.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { headers, expectId: null });
    return { protocolVersion, ...(r.sessionId ? { id: r.sessionId } : {}) };
  }
}

/** The `_meta` protocol version of a 2026-07-28 request; undefined for a legacy one. */
function modernVersion(request: JsonRpcRequest): string | undefined {
  const e = eraOfRequest(request.method, request);
  return e.era === 'modern' ? (e.protocolVersion ?? MODERN_PROTOCOL_VERSION) : undefined;
}

function upstreamError(request: JsonRpcRequest, why: string): JsonRpcMessage {
  return {
    jsonrpc: '2.0',
    id: request.id,
    error: { code: MOCK_UPSTREAM_ERROR_CODE, message: `mcptap mock: not in the recording, and the upstream did not answer: ${why}` },
  };
}
