/**
 * One way to reach a server, whatever the transport: send a request and get its {@link CallResult},
 * send a notification, end a session. HTTP channels compute the MCP headers for the era (and apply
 * per-request overrides); stdio channels have no headers and ignore them.
 */
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../model/jsonrpc.js';
import type { CallResult } from './call-result.js';
import { McpHttpClient, type McpHttpClientOptions } from './http-client.js';
import { applyHeaderOverrides, mcpHeaders, type HeaderContext } from './mcp-request.js';
import type { McpStdioClient } from './stdio-client.js';

export interface ChannelRequestOptions {
  /** Header overrides: a string sets the header, `null` removes it (HTTP only). */
  headers?: Readonly<Record<string, string | null>>;
  timeoutMs?: number;
  signal?: AbortSignal;
  onMessage?: (message: JsonRpcMessage, timeUs: number) => void;
  /** HTTP: the response headers arrived; a stdio {@link McpChannel.stream}: it is open (status 200). */
  onHeaders?: (status: number, timeUs: number) => void;
}

export interface McpChannel {
  readonly transport: 'http' | 'stdio';
  request(req: JsonRpcRequest, ctx: HeaderContext, opts?: ChannelRequestOptions): Promise<CallResult>;
  notify(n: JsonRpcNotification, ctx: HeaderContext, opts?: ChannelRequestOptions): Promise<void>;
  /**
   * Legacy: the session's own server-to-client stream, read until it ends: HTTP, the standalone
   * GET stream; stdio, the notifications on stdout that belong to no request.
   */
  stream?(ctx: HeaderContext, opts?: ChannelRequestOptions): Promise<CallResult>;
  /** HTTP: POSTs the answer to a request the server sent (stdio clients answer those themselves). */
  respond?(res: JsonRpcResponse, ctx: HeaderContext): Promise<void>;
  /** Ends a legacy session (HTTP DELETE). No-op where sessions are not addressable. */
  endSession(ctx: HeaderContext): Promise<void>;
  close(): Promise<void>;
}

export class HttpChannel implements McpChannel {
  readonly transport = 'http' as const;
  readonly client: McpHttpClient;

  constructor(clientOrOptions: McpHttpClient | McpHttpClientOptions) {
    this.client = clientOrOptions instanceof McpHttpClient ? clientOrOptions : new McpHttpClient(clientOrOptions);
  }

  request(req: JsonRpcRequest, ctx: HeaderContext, opts: ChannelRequestOptions = {}): Promise<CallResult> {
    const headers = applyHeaderOverrides(mcpHeaders(req.method, req.params, ctx), opts.headers);
    return this.client.post(req, { headers, timeoutMs: opts.timeoutMs, signal: opts.signal, onMessage: opts.onMessage });
  }

  async notify(n: JsonRpcNotification, ctx: HeaderContext, opts: ChannelRequestOptions = {}): Promise<void> {
    const headers = applyHeaderOverrides(mcpHeaders(n.method, n.params, ctx), opts.headers);
    await this.client.post(n, { headers, timeoutMs: opts.timeoutMs, signal: opts.signal });
  }

  stream(ctx: HeaderContext, opts: ChannelRequestOptions = {}): Promise<CallResult> {
    const headers = applyHeaderOverrides(mcpHeaders('', undefined, ctx), opts.headers);
    return this.client.stream({ headers, timeoutMs: opts.timeoutMs, signal: opts.signal, onMessage: opts.onMessage, onHeaders: opts.onHeaders });
  }

  async respond(res: JsonRpcResponse, ctx: HeaderContext): Promise<void> {
    await this.client.post(res, { headers: mcpHeaders('', undefined, ctx), expectId: null });
  }

  async endSession(ctx: HeaderContext): Promise<void> {
    if (ctx.era !== 'legacy' || !ctx.sessionId) return;
    await this.client.deleteSession(mcpHeaders('', undefined, ctx));
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

export class StdioChannel implements McpChannel {
  readonly transport = 'stdio' as const;

  constructor(readonly client: McpStdioClient) {}

  request(req: JsonRpcRequest, _ctx: HeaderContext, opts: ChannelRequestOptions = {}): Promise<CallResult> {
    return this.client.request(req, { timeoutMs: opts.timeoutMs, signal: opts.signal, onMessage: opts.onMessage });
  }

  async notify(n: JsonRpcNotification): Promise<void> {
    this.client.send(n);
  }

  /** Notifications on stdout that belong to no request, until the signal aborts; open at once. */
  stream(_ctx: HeaderContext, opts: ChannelRequestOptions = {}): Promise<CallResult> {
    const onHeaders = opts.onHeaders;
    return this.client.watch({
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onMessage: opts.onMessage,
      ...(onHeaders ? { onOpen: (t: number) => onHeaders(200, t) } : {}),
    });
  }

  async endSession(): Promise<void> {}

  close(): Promise<void> {
    return this.client.close();
  }
}
