/** Opt-in content attributes (`--capture-content`): redacted, then truncated; a value the redactor fails on is left out, never exported unredacted. */
import type { Attributes } from '@opentelemetry/api';
import { ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, ATTR_GEN_AI_TOOL_CALL_RESULT, ATTR_MCP_RESOURCE_URI } from '@opentelemetry/semantic-conventions/incubating';
import type { Exchange } from '../model/exchange.js';
import type { JsonRpcResponse } from '../model/jsonrpc.js';
import { paramsOf } from '../protocol/mcp.js';

/** A redacted copy (src/redact/'s Redactor fits); `at` is the value's path in its JSON-RPC message (`['params', 'arguments']`), for path rules. */
export type Redact = (value: unknown, at?: readonly string[]) => unknown;

export interface ContentOptions {
  redact?: Redact;
  /** Longest attribute value in characters; longer values are cut and marked. */
  maxLength: number;
  /** Called once per value the redactor or serializer failed on. */
  onError: (err: unknown) => void;
}

export const MCPTAP_CONTENT_ATTR = {
  requestParams: 'mcptap.request.params',
  responseResult: 'mcptap.response.result',
} as const;

const URI_METHODS = new Set(['resources/read', 'resources/subscribe', 'resources/unsubscribe']);

/** Redact, serialize (strings stay as they are) and truncate; undefined when it cannot be done safely. */
export function contentString(value: unknown, opts: ContentOptions, at?: readonly string[]): string | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  try {
    const redacted = opts.redact ? opts.redact(value, at) : value;
    text = typeof redacted === 'string' ? redacted : JSON.stringify(redacted);
  } catch (err) {
    opts.onError(err);
    return undefined;
  }
  if (text === undefined) return undefined;
  return text.length > opts.maxLength ? `${text.slice(0, opts.maxLength)}…[truncated ${text.length - opts.maxLength} chars]` : text;
}

export function contentAttributes(ex: Exchange, opts: ContentOptions): Attributes {
  const attrs: Attributes = {};
  const put = (key: string, value: unknown, at?: readonly string[]) => {
    const s = contentString(value, opts, at);
    if (s !== undefined) attrs[key] = s;
  };
  const params = paramsOf(ex.request);
  const result = (ex.response as JsonRpcResponse | undefined)?.result;
  if (URI_METHODS.has(ex.method)) put(ATTR_MCP_RESOURCE_URI, ex.target);
  if (ex.method === 'tools/call') {
    put(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, params?.arguments, ['params', 'arguments']);
    // semconv: the result "if execution was successful"; a failed tool's result is still content.
    put(ex.outcome === 'tool_error' ? MCPTAP_CONTENT_ATTR.responseResult : ATTR_GEN_AI_TOOL_CALL_RESULT, result, ['result']);
  } else {
    if (params) {
      // `_meta` is protocol plumbing (versions, trace context, progress tokens), not content.
      const { _meta: _ignored, ...rest } = params;
      if (Object.keys(rest).length > 0) put(MCPTAP_CONTENT_ATTR.requestParams, rest, ['params']);
    }
    put(MCPTAP_CONTENT_ATTR.responseResult, result, ['result']);
  }
  return attrs;
}
