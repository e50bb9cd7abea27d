/**
 * Which accepted outcome changes look like an API change rather than new answers: a call that
 * worked and now meets an unknown method or tool, or invalid params. `--update` writes them into
 * the baseline all the same and warns, since a baseline that expects "unknown tool" tests nothing. Pure.
 */
import { isRecord } from '../model/jsonrpc.js';
import type { StoredExchange } from '../store/types.js';
import type { ReplayedAnswer } from './compare.js';
import { groupName } from './replay-report.js';

export type ApiChangeKind = 'unknown method' | 'unknown tool' | 'invalid params';

export interface ApiChange {
  /** `tools/call create_note`, or the method alone. */
  exchange: string;
  kind: ApiChangeKind;
  /** The new answer's error text, one line. */
  detail: string;
}

const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

/** The API change an accepted answer shows, or undefined when it is an ordinary new answer. */
export function apiChangeOf(recorded: Pick<StoredExchange, 'method' | 'target' | 'outcome'>, replayed: ReplayedAnswer): ApiChange | undefined {
  if (recorded.outcome !== 'ok' || replayed.outcome === 'ok') return undefined;
  const text = errorText(replayed);
  if (text === undefined) return undefined;
  const kind = kindOf(replayed.errorCode, text, recorded.target);
  return kind === undefined ? undefined : { exchange: groupName(recorded), kind, detail: text.replace(/\s+/g, ' ').slice(0, 200) };
}

/** SDK 1.x servers answer an unknown tool or bad arguments as a tool error whose text holds the code. */
function kindOf(code: number | undefined, text: string, tool: string | undefined): ApiChangeKind | undefined {
  const unknownTool = tool !== undefined && /not found|unknown tool/i.test(text) && text.includes(tool);
  if (code === METHOD_NOT_FOUND) return unknownTool ? 'unknown tool' : 'unknown method';
  if (unknownTool) return 'unknown tool';
  if (code === INVALID_PARAMS || /-32602\b|invalid params|input validation error/i.test(text)) return 'invalid params';
  return undefined;
}

/** The JSON-RPC error's message, or a tool error's text content. */
function errorText(a: ReplayedAnswer): string | undefined {
  const res = a.response;
  if (!res || !isRecord(res)) return undefined;
  const err = (res as { error?: unknown }).error;
  if (isRecord(err)) return `${String(err.message)} (${String(err.code)})`;
  const result = (res as { result?: unknown }).result;
  if (a.outcome !== 'tool_error' || !isRecord(result) || !Array.isArray(result.content)) return undefined;
  const texts = result.content.filter((c): c is { text: string } => isRecord(c) && typeof c.text === 'string').map((c) => c.text);
  return texts.length > 0 ? texts.join(' ') : undefined;
}
