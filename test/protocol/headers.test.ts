import { describe, expect, it } from 'vitest';
import { checkRequestHeaders, connectionTokens, decodeHeaderValue, encodeHeaderValue, isHopByHop, needsSentinel } from '../../src/protocol/headers.js';
import type { JsonRpcMessage } from '../../src/model/jsonrpc.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const call = (name: string, extra: Record<string, unknown> = {}): JsonRpcMessage => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: {}, _meta: META, ...extra },
});

describe('header value encoding (=?base64?…?=)', () => {
  it('leaves plain printable ASCII alone and wraps everything else', () => {
    expect(encodeHeaderValue('get_weather')).toBe('get_weather');
    expect(encodeHeaderValue('tab\there')).toBe('tab\there');
    for (const v of ['héllo', ' lead', 'trail ', '', 'line\nbreak', '=?base64?abc?=', '日本語', '🎉']) {
      expect(needsSentinel(v)).toBe(true);
      const enc = encodeHeaderValue(v);
      expect(enc).toMatch(/^=\?base64\?[A-Za-z0-9+/]*={0,2}\?=$/);
      expect(decodeHeaderValue(enc)).toEqual({ ok: true, value: v, encoded: true });
    }
  });

  it('reports malformed sentinels instead of throwing', () => {
    expect(decodeHeaderValue('=?base64?not base64!?=').ok).toBe(false);
    expect(decodeHeaderValue('=?base64?abc?=').ok).toBe(false); // length not a multiple of 4
    expect(decodeHeaderValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/UTF-8/),
    });
    expect(decodeHeaderValue('=?BASE64?w6k=?=')).toEqual({ ok: true, value: 'é', encoded: true });
    expect(decodeHeaderValue('  plain  ')).toEqual({ ok: true, value: 'plain', encoded: false });
  });
});

describe('checkRequestHeaders (2026-07-28 side-path checks)', () => {
  const good = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

  it('accepts agreeing headers, including a base64-encoded Mcp-Name', () => {
    expect(checkRequestHeaders(good, call('echo'))).toEqual([]);
    expect(checkRequestHeaders({ ...good, 'mcp-name': encodeHeaderValue('écho') }, call('écho'))).toEqual([]);
    const read: JsonRpcMessage = { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'file:///a b', _meta: META } };
    expect(checkRequestHeaders({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'resources/read', 'mcp-name': 'file:///a b' }, read)).toEqual([]);
  });

  it('flags version, method and name disagreements, and missing headers on modern requests', () => {
    const m = (h: Record<string, string>, msg = call('echo')) => checkRequestHeaders(h, msg).map((x) => x.header);
    expect(m({ ...good, 'mcp-protocol-version': '2025-11-25' })).toEqual(['MCP-Protocol-Version']);
    expect(m({ ...good, 'mcp-method': 'tools/list' })).toEqual(['Mcp-Method']);
    expect(m({ ...good, 'mcp-name': 'other' })).toEqual(['Mcp-Name']);
    expect(m({ ...good, 'mcp-name': '=?base64?@@@@?=' })).toEqual(['Mcp-Name']);
    expect(m({})).toEqual(['MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name']);
    const detail = checkRequestHeaders({ ...good, 'mcp-method': 'tools/list' }, call('echo'))[0]!;
    expect(detail).toMatchObject({ headerValue: 'tools/list', bodyValue: 'tools/call' });
  });

  it('holds legacy requests only to the headers they chose to send; notifications need no Mcp-Method', () => {
    const legacy: JsonRpcMessage = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo' } };
    expect(checkRequestHeaders({ 'mcp-protocol-version': '2025-11-25' }, legacy)).toEqual([]);
    expect(checkRequestHeaders({ 'mcp-method': 'tools/list' }, legacy).map((x) => x.header)).toEqual(['Mcp-Method']);
    const note: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: META } };
    expect(checkRequestHeaders({ 'mcp-protocol-version': '2026-07-28' }, note)).toEqual([]);
  });
});

describe('hop-by-hop headers', () => {
  it('knows the fixed set and the names listed in Connection', () => {
    const listed = connectionTokens('keep-alive, X-Hop, close');
    expect([...(listed ?? [])]).toEqual(['x-hop']);
    for (const h of ['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate', 'x-hop'])
      expect(isHopByHop(h, listed)).toBe(true);
    for (const h of ['authorization', 'mcp-session-id', 'last-event-id', 'cookie', 'content-type']) expect(isHopByHop(h, listed)).toBe(false);
    expect(connectionTokens(undefined)).toBeUndefined();
  });
});
