/** Which accepted outcome changes `replay --update` calls an API change: both ways for each kind. */
import { describe, expect, it } from 'vitest';
import { apiChangeOf } from '../../src/replay/api-change.js';
import type { ReplayedAnswer } from '../../src/replay/compare.js';

const call = { method: 'tools/call', target: 'create_note', outcome: 'ok' as const };
const toolError = (text: string): ReplayedAnswer => ({
  response: { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }], isError: true } },
  outcome: 'tool_error',
  isError: true,
  progressCount: 0,
  unexpectedServerRequests: [],
});
const rpcError = (code: number, message: string): ReplayedAnswer => ({
  response: { jsonrpc: '2.0', id: 1, error: { code, message } },
  outcome: 'jsonrpc_error',
  errorCode: code,
  isError: false,
  progressCount: 0,
  unexpectedServerRequests: [],
});

describe('apiChangeOf', () => {
  it('an SDK 1.x "Tool X not found" tool error after ok is an unknown tool; another tool error is not', () => {
    expect(apiChangeOf(call, toolError('MCP error -32602: Tool create_note not found'))).toEqual({
      exchange: 'tools/call create_note',
      kind: 'unknown tool',
      detail: 'MCP error -32602: Tool create_note not found',
    });
    expect(apiChangeOf(call, toolError('disk full'))).toBeUndefined();
    // Another tool's name is not found: not this tool's rename.
    expect(apiChangeOf(call, toolError('note other not found'))).toBeUndefined();
  });

  it('invalid params (-32602 as a JSON-RPC error or in a tool error) after ok is an API change', () => {
    expect(apiChangeOf(call, rpcError(-32602, 'Invalid arguments'))).toMatchObject({ kind: 'invalid params' });
    expect(apiChangeOf(call, toolError('MCP error -32602: Input validation error: title: Required'))).toMatchObject({ kind: 'invalid params' });
    expect(apiChangeOf(call, rpcError(-32603, 'Internal error'))).toBeUndefined();
  });

  it('an unknown method after ok is one; nothing is one when the call did not work when recorded, or works now', () => {
    expect(apiChangeOf({ method: 'prompts/list', target: undefined, outcome: 'ok' }, rpcError(-32601, 'Method not found'))).toMatchObject({
      exchange: 'prompts/list',
      kind: 'unknown method',
    });
    expect(apiChangeOf({ ...call, outcome: 'tool_error' }, toolError('MCP error -32602: Tool create_note not found'))).toBeUndefined();
    expect(apiChangeOf(call, { ...toolError('x'), outcome: 'ok', isError: false })).toBeUndefined();
  });
});
