/**
 * Pure mapping from mcptap's model to the OpenTelemetry MCP semantic conventions (semconv 1.45, `docs/gen-ai/mcp.md`), shared by the span and metrics
 * sinks so both label an exchange alike. Names semconv lacks are mcptap's own (`mcptap.*`).
 */
import { SpanStatusCode, type Attributes, type HrTime, type SpanStatus } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_NETWORK_TRANSPORT,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  NETWORK_TRANSPORT_VALUE_PIPE,
  NETWORK_TRANSPORT_VALUE_TCP,
} from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_PROTOCOL_VERSION,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '@opentelemetry/semantic-conventions/incubating';
import type { ConnectionInfo, Transport } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import { idText } from '../model/jsonrpc.js';
import { exchangeStreamTimes, streamFigures } from '../model/stream-figures.js';

export const MCPTAP_ATTR = {
  direction: 'mcptap.direction',
  outcome: 'mcptap.outcome',
  connectionId: 'mcptap.connection.id',
  exchangeKey: 'mcptap.exchange.key',
  era: 'mcptap.era',
  sseEvents: 'mcptap.sse.events',
  /** Seconds (double), on the spans of streamed answers: see model/stream-figures.ts. */
  sseTimeToHeaders: 'mcptap.sse.time_to_headers',
  sseTimeToFirstEvent: 'mcptap.sse.time_to_first_event',
  sseGapMax: 'mcptap.sse.gap_max',
  sseProgressIntervalMax: 'mcptap.sse.progress_interval_max',
  sseTail: 'mcptap.sse.tail',
  anomalyKind: 'mcptap.anomaly.kind',
  sinkName: 'mcptap.sink.name',
  /** Long-lived streams: `get` (standalone GET) or `listen` (`subscriptions/listen`). */
  streamKind: 'mcptap.stream.kind',
  streamNotifications: 'mcptap.stream.notifications',
} as const;

/** A µs-since-epoch timestamp as an OTel HrTime (exact: no float rounding of nanoseconds). */
export function usToHrTime(us: number): HrTime {
  const whole = Math.floor(us);
  const seconds = Math.floor(whole / 1_000_000);
  return [seconds, (whole - seconds * 1_000_000) * 1000];
}

/** Tool or prompt name, the only low-cardinality span-name targets (resource URIs are not). */
export function lowCardinalityTarget(ex: Pick<Exchange, 'method' | 'target'>): string | undefined {
  return ex.method === 'tools/call' || ex.method === 'prompts/get' ? ex.target : undefined;
}

/** `{mcp.method.name} {target}`, or just the method. */
export function spanNameOf(ex: Pick<Exchange, 'method' | 'target'>): string {
  const target = lowCardinalityTarget(ex);
  return target ? `${ex.method} ${target}` : ex.method;
}

export function networkTransportOf(transport: Transport | undefined): string | undefined {
  if (transport === 'stdio') return NETWORK_TRANSPORT_VALUE_PIPE;
  if (transport === 'http') return NETWORK_TRANSPORT_VALUE_TCP;
  return undefined;
}

/** Transport, protocol (name and HTTP version) and server address/port of a connection. */
export function connectionAttributes(conn: ConnectionInfo): Attributes {
  const attrs: Attributes = { [ATTR_NETWORK_TRANSPORT]: networkTransportOf(conn.transport) };
  if (conn.transport !== 'http') return attrs;
  attrs[ATTR_NETWORK_PROTOCOL_NAME] = 'http';
  // semconv's examples are `1.1` and `2`; Node says `2.0` for HTTP/2.
  const version = conn.peer?.httpVersion;
  if (version) attrs[ATTR_NETWORK_PROTOCOL_VERSION] = version === '2.0' ? '2' : version;
  const server = serverOf(conn);
  if (server.address) attrs[ATTR_SERVER_ADDRESS] = server.address;
  if (server.port !== undefined) attrs[ATTR_SERVER_PORT] = server.port;
  return attrs;
}

function serverOf(conn: ConnectionInfo): { address?: string; port?: number } {
  try {
    const url = new URL(conn.target);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { address: url.hostname.replace(/^\[(.*)\]$/, '$1'), port };
  } catch {
    return { ...(conn.peer?.address ? { address: conn.peer.address } : {}), ...(conn.peer?.port !== undefined ? { port: conn.peer.port } : {}) };
  }
}

/** Attributes known when the request is seen; `connAttrs` is {@link connectionAttributes}, computed once per connection by the caller. */
export function exchangeStartAttributes(ex: Exchange, connAttrs: Attributes = {}): Attributes {
  const attrs: Attributes = {
    [ATTR_MCP_METHOD_NAME]: ex.method,
    [ATTR_JSONRPC_REQUEST_ID]: idText(ex.id),
    [MCPTAP_ATTR.direction]: ex.direction,
    [MCPTAP_ATTR.connectionId]: ex.connectionId,
    [MCPTAP_ATTR.exchangeKey]: ex.key,
  };
  // A loop, not a spread in the literal: this runs once per exchange.
  for (const k in connAttrs) attrs[k] = connAttrs[k];
  // semconv: only when not 2.0 (MCP requires 2.0; a peer that says otherwise shows here). JSON-RPC 1.0 messages have no `jsonrpc` member.
  const jsonrpc = (ex.request as { jsonrpc?: unknown }).jsonrpc;
  if (jsonrpc !== '2.0') attrs[ATTR_JSONRPC_PROTOCOL_VERSION] = jsonrpc === undefined ? '1.0' : String(jsonrpc);
  putTargetAttributes(ex, attrs);
  return attrs;
}

/** `gen_ai.operation.name` (tool calls only), `gen_ai.tool.name` / `gen_ai.prompt.name`: on spans and the operation metric alike. */
export function putTargetAttributes(ex: Pick<Exchange, 'method' | 'target'>, attrs: Attributes): void {
  if (ex.method === 'tools/call') {
    attrs[ATTR_GEN_AI_OPERATION_NAME] = GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL;
    if (ex.target) attrs[ATTR_GEN_AI_TOOL_NAME] = ex.target;
  } else if (ex.method === 'prompts/get' && ex.target) {
    attrs[ATTR_GEN_AI_PROMPT_NAME] = ex.target;
  }
}

/** `rpc.response.status_code` (a JSON-RPC error's code) and `error.type`: on spans and the operation metric alike. */
export function putErrorAttributes(ex: Pick<Exchange, 'outcome' | 'errorCode' | 'transport'>, attrs: Attributes, errorType = errorTypeOf(ex)): void {
  if (ex.outcome === 'jsonrpc_error' && ex.errorCode !== undefined) attrs[ATTR_RPC_RESPONSE_STATUS_CODE] = String(ex.errorCode);
  if (errorType) attrs[ATTR_ERROR_TYPE] = errorType;
}

/** What a connection learned so far (from earlier exchanges), used when an exchange lacks it. */
export interface ConnectionFacts {
  protocolVersion?: string;
  sessionId?: string;
}

/** Attributes known once the exchange has its outcome, added to `attrs` (a span's start attributes: one object, not two). */
export function exchangeEndAttributes(ex: Exchange, facts: ConnectionFacts = {}, attrs: Attributes = {}): Attributes {
  attrs[MCPTAP_ATTR.outcome] = ex.outcome;
  attrs[MCPTAP_ATTR.era] = ex.era;
  const version = ex.protocolVersion ?? facts.protocolVersion;
  if (version) attrs[ATTR_MCP_PROTOCOL_VERSION] = version;
  const session = ex.sessionId ?? facts.sessionId;
  if (session) attrs[ATTR_MCP_SESSION_ID] = session;
  if (ex.transport?.httpStatus !== undefined) attrs[ATTR_HTTP_RESPONSE_STATUS_CODE] = ex.transport.httpStatus;
  putErrorAttributes(ex, attrs);
  if (ex.transport?.eventTimesUs) {
    attrs[MCPTAP_ATTR.sseEvents] = ex.transport.eventTimesUs.length;
    putStreamFigures(ex, attrs);
  }
  return attrs;
}

/** A loop, not Math.max(...xs): a stream of 100,000 events would overflow the call's arguments. */
function maxOf(xs: readonly number[]): number {
  let m = -Infinity;
  for (const x of xs) if (x > m) m = x;
  return m;
}

/** The streamed answer's figures in seconds: headers and first event from the request, the longest gaps, the tail. */
function putStreamFigures(ex: Exchange, attrs: Attributes): void {
  const f = streamFigures(exchangeStreamTimes(ex));
  const s = (us: number) => Math.max(0, us) / 1e6;
  if (f.headers) attrs[MCPTAP_ATTR.sseTimeToHeaders] = s(f.headers[0]!);
  if (f.first_event) attrs[MCPTAP_ATTR.sseTimeToFirstEvent] = s(f.first_event[0]!);
  if (f.gap?.length) attrs[MCPTAP_ATTR.sseGapMax] = s(maxOf(f.gap));
  if (f.progress?.length) attrs[MCPTAP_ATTR.sseProgressIntervalMax] = s(maxOf(f.progress));
  if (f.tail) attrs[MCPTAP_ATTR.sseTail] = s(f.tail[0]!);
}

/** `error.type`: the JSON-RPC code, `tool_error`, the transport failure class, `cancelled`...; undefined on success. Low cardinality by construction. */
export function errorTypeOf(ex: Pick<Exchange, 'outcome' | 'errorCode' | 'transport'>): string | undefined {
  switch (ex.outcome) {
    case 'ok':
      return undefined;
    case 'jsonrpc_error':
      return ex.errorCode !== undefined ? String(ex.errorCode) : '_OTHER';
    case 'tool_error':
      return 'tool_error';
    case 'cancelled':
      return 'cancelled';
    case 'transport_error': {
      const status = ex.transport?.httpStatus;
      return ex.transport?.errorClass ?? (status !== undefined && status >= 400 ? String(status) : 'transport_error');
    }
    case 'unanswered':
      return ex.transport?.errorClass ?? 'unanswered';
    case 'orphan_response':
      return 'orphan_response';
  }
}

const UNSET_STATUS: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

/** ERROR whenever `error.type` is set; `toolText` (a failed tool's text) only with content capture on; `errorText`: the JSON-RPC message, redacted. */
export function statusOf(ex: Exchange, toolText?: string, errorText?: string): SpanStatus {
  if (ex.outcome === 'ok') return UNSET_STATUS;
  return { code: SpanStatusCode.ERROR, message: statusMessage(ex, toolText, errorText) };
}

function statusMessage(ex: Exchange, toolText: string | undefined, errorText: string | undefined): string {
  switch (ex.outcome) {
    case 'jsonrpc_error':
      return errorText ?? ex.errorMessage ?? `JSON-RPC error ${ex.errorCode ?? ''}`.trim();
    case 'tool_error':
      return toolText ?? 'tool result has isError: true';
    case 'cancelled':
      return `cancelled by ${ex.cancel?.by ?? 'unknown'}${ex.cancel?.reason ? `: ${ex.cancel.reason}` : ''}`;
    case 'transport_error':
      return `transport error: ${ex.transport?.errorClass ?? 'unknown'}${ex.transport?.httpStatus !== undefined ? ` (HTTP ${ex.transport.httpStatus})` : ''}`;
    case 'unanswered':
      return `no response${ex.transport?.errorClass ? ` (${ex.transport.errorClass})` : ''}`;
    default:
      return ex.outcome;
  }
}
