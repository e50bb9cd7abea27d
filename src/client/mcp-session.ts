/**
 * An era-aware conversation with one server over a {@link McpChannel}.
 *
 * - Legacy (2024-11-05 … 2025-11-25): `initialize()` performs the handshake and remembers the
 *   `Mcp-Session-Id` and negotiated version, which then travel on every request; `close()` sends
 *   DELETE over HTTP.
 * - Modern (2026-07-28): stateless; every request gets the `_meta` envelope and the
 *   `Mcp-Method`/`Mcp-Name` headers; `initialize()` is not used.
 *
 * The caller keeps exact control: {@link McpSession.send} sends a request exactly as given (only
 * headers are derived, and may be overridden), {@link McpSession.request} builds it for the era.
 */
import { isRecord, type JsonRpcId, type JsonRpcNotification, type JsonRpcRequest } from '../model/jsonrpc.js';
import { LEGACY_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '../protocol/mcp.js';
import type { CallResult } from './call-result.js';
import type { ChannelRequestOptions, McpChannel } from './mcp-channel.js';
import { DEFAULT_CLIENT_INFO, withModernMeta, type ClientInfo, type HeaderContext } from './mcp-request.js';

export interface IdSource {
  next(): JsonRpcId;
}

/** Integer ids counting up from `start`. */
export function numericIds(start = 1): IdSource {
  let n = start;
  return { next: () => n++ };
}

export interface McpSessionOptions {
  era: 'legacy' | 'modern';
  /** Legacy: the version to ask for in `initialize`. Modern: the `_meta` version. */
  protocolVersion?: string;
  clientInfo?: ClientInfo;
  capabilities?: Record<string, unknown>;
  ids?: IdSource;
  timeoutMs?: number;
}

export class McpSession {
  readonly era: 'legacy' | 'modern';
  private readonly ids: IdSource;
  private sid: string | undefined;
  private version: string | undefined;
  private initialized = false;

  constructor(
    readonly channel: McpChannel,
    private readonly opts: McpSessionOptions,
  ) {
    this.era = opts.era;
    this.ids = opts.ids ?? numericIds();
    this.version = opts.era === 'modern' ? (opts.protocolVersion ?? MODERN_PROTOCOL_VERSION) : undefined;
  }

  get sessionId(): string | undefined {
    return this.sid;
  }

  /** Negotiated (legacy, after initialize) or declared (modern) protocol version. */
  get protocolVersion(): string | undefined {
    return this.version;
  }

  get isInitialized(): boolean {
    return this.initialized;
  }

  get headerContext(): HeaderContext {
    return { era: this.era, protocolVersion: this.version, sessionId: this.sid };
  }

  nextId(): JsonRpcId {
    return this.ids.next();
  }

  /**
   * Legacy handshake: `initialize`, then `notifications/initialized`. Resolves with the initialize
   * exchange whatever the server answered; the session is usable only when `isInitialized`.
   */
  async initialize(opts: ChannelRequestOptions = {}): Promise<CallResult> {
    return this.open(
      {
        jsonrpc: '2.0',
        id: this.ids.next(),
        method: 'initialize',
        params: {
          protocolVersion: this.opts.protocolVersion ?? LEGACY_PROTOCOL_VERSION,
          capabilities: this.opts.capabilities ?? {},
          clientInfo: this.opts.clientInfo ?? DEFAULT_CLIENT_INFO,
        },
      },
      opts,
    );
  }

  /**
   * Legacy handshake with a given `initialize` request (a replay sends the recorded one as-is):
   * adopts the session id and version the server answers with, then sends `notifications/initialized`.
   */
  async open(req: JsonRpcRequest, opts: ChannelRequestOptions = {}): Promise<CallResult> {
    const res = await this.channel.request(req, { era: 'legacy' }, { timeoutMs: this.opts.timeoutMs, ...opts });
    const result = res.response?.result;
    if (!isRecord(result)) return res;
    this.sid = res.sessionId;
    this.version = typeof result.protocolVersion === 'string' ? result.protocolVersion : LEGACY_PROTOCOL_VERSION;
    this.initialized = true;
    await this.notify({ jsonrpc: '2.0', method: 'notifications/initialized' }, opts);
    return res;
  }

  /** Send a notification with the session's headers. */
  notify(n: JsonRpcNotification, opts: ChannelRequestOptions = {}): Promise<void> {
    return this.channel.notify(n, this.headerContext, opts);
  }

  /** The request this session would send for `method` (modern: with the `_meta` envelope). */
  build(method: string, params?: Record<string, unknown>, id: JsonRpcId = this.ids.next()): JsonRpcRequest {
    if (this.era === 'modern') {
      const p = withModernMeta(params, { protocolVersion: this.version, clientInfo: this.opts.clientInfo, capabilities: this.opts.capabilities });
      return { jsonrpc: '2.0', id, method, params: p };
    }
    return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
  }

  /** The notification this session would send (modern: with the `_meta` envelope). */
  buildNotification(method: string, params?: Record<string, unknown>): JsonRpcNotification {
    if (this.era === 'modern') {
      const p = withModernMeta(params, { protocolVersion: this.version, clientInfo: this.opts.clientInfo, capabilities: this.opts.capabilities });
      return { jsonrpc: '2.0', method, params: p };
    }
    return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
  }

  request(method: string, params?: Record<string, unknown>, opts: ChannelRequestOptions & { id?: JsonRpcId } = {}): Promise<CallResult> {
    return this.send(this.build(method, params, opts.id ?? this.ids.next()), opts);
  }

  /** Send exactly this request; only the session's headers are added (and overridable). */
  send(req: JsonRpcRequest, opts: ChannelRequestOptions = {}): Promise<CallResult> {
    // Same as `{timeoutMs, ...opts}`; Object.assign because object spread is slow on Node 20's V8
    // and this runs once per request.
    return this.channel.request(req, this.headerContext, Object.assign({ timeoutMs: this.opts.timeoutMs }, opts));
  }

  /** End the session (legacy HTTP: DELETE). Errors are swallowed: the session is gone either way. */
  async close(): Promise<void> {
    if (this.era === 'legacy' && this.sid) await this.channel.endSession(this.headerContext).catch(() => undefined);
    this.sid = undefined;
    this.initialized = false;
  }
}
