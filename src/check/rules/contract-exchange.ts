/**
 * What the contract checks (tool-contracts.ts, prompt-resource-contracts.ts) read of an exchange:
 * its params and result, how the server took it, and where a finding about it points.
 */
import type { FindingLocation } from '../finding.js';
import type { Exchange } from '../../model/exchange.js';
import type { Declared } from './declared-surface.js';

export type Item = Record<string, unknown>;
/** What the declared surface said when a request was sent: its declaration, or whether absence is evidence. */
export type Snapshot = { declared?: Declared<Item>; evidence: boolean };
/** How the server took a request. */
export type Verdict = 'accepted' | 'rejected' | 'input_required' | 'unanswered';

export function whereOf(ex: Exchange, side: 'client' | 'server', tool?: string): FindingLocation {
  return {
    connectionId: ex.connectionId,
    ...(ex.sessionId !== undefined && { sessionId: ex.sessionId }),
    exchangeKey: ex.key,
    jsonRpcId: ex.id,
    method: ex.method,
    ...(tool !== undefined && { tool }),
    side,
    timeUs: side === 'client' ? ex.startUs : (ex.endUs ?? ex.startUs),
  };
}

export function spec(ex: Exchange): { specVersion?: string } {
  return ex.protocolVersion !== undefined ? { specVersion: ex.protocolVersion } : {};
}

export function paramsOf(msg: unknown): Item {
  const p = (msg as { params?: unknown } | undefined)?.params;
  return p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Item) : {};
}

export function resultOf(ex: Exchange): Item | undefined {
  const r = (ex.response as { result?: unknown } | undefined)?.result;
  return r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as Item) : undefined;
}

export function verdictOf(ex: Exchange): Verdict {
  if (ex.outcome === 'jsonrpc_error' || ex.outcome === 'tool_error') return 'rejected';
  if (ex.outcome !== 'ok') return 'unanswered';
  return resultOf(ex)?.resultType === 'input_required' ? 'input_required' : 'accepted';
}

export function verdictText(ex: Exchange, verdict: Verdict): string {
  switch (verdict) {
    case 'accepted':
      return 'the server accepted it';
    case 'rejected':
      return ex.outcome === 'tool_error' ? 'the server rejected it (isError result)' : `the server rejected it (JSON-RPC error ${ex.errorCode ?? '?'})`;
    case 'input_required':
      return 'the server asked for more input';
    case 'unanswered':
      return `the call ended ${ex.outcome}`;
  }
}
