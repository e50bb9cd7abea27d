/**
 * Pipeline.pushRequest: the standard MCP headers are checked against every request message of a
 * body, and each disagreement is a `header_mismatch` anomaly linked to its exchange, emitted after
 * the events of the whole body (a single message or a batch alike).
 */
import { describe, expect, it } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: META } });
const HEADERS = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

function run(body: unknown, headers: Record<string, string>): string[] {
  const p = new Pipeline({ tickMs: 0 });
  const seen: TapEvent[] = [];
  p.subscribe((e) => seen.push(e));
  p.openConnection({ connectionId: 'h', transport: 'http', target: 'http://127.0.0.1:9/mcp' }, 1);
  p.pushRequest(
    { connectionId: 'h', direction: 'c2s', channel: 'http-body', timeUs: 10, context: { streamId: 's1' } },
    Buffer.from(JSON.stringify(body)),
    headers,
  );
  expect(p.errors).toBe(0);
  return seen
    .slice(1)
    .map((e) => (e.type === 'anomaly' ? `anomaly ${e.kind} ${e.exchangeKey} ${e.detail}` : e.type === 'frame' ? `frame ${e.exchangeKey}` : `${e.type}`));
}

describe('Pipeline.pushRequest header checks', () => {
  it('a single message that agrees with its headers: no anomaly', () => {
    expect(run(call(1, 'echo'), HEADERS)).toEqual(['exchange-started', 'frame h/c2s/1']);
  });

  it('a single message that disagrees: the anomaly follows its events and names its exchange', () => {
    expect(run(call(1, 'add'), HEADERS)).toEqual([
      'exchange-started',
      'frame h/c2s/1',
      'anomaly header_mismatch h/c2s/1 tools/call id 1: Mcp-Name "echo" != params.name "add"',
    ]);
  });

  it('a batch: every message is checked, after the events of the whole batch', () => {
    expect(run([call(1, 'echo'), call(2, 'add')], HEADERS)).toEqual([
      'exchange-started',
      'frame h/c2s/1',
      'exchange-started',
      'frame h/c2s/2',
      'anomaly header_mismatch h/c2s/2 tools/call id 2: Mcp-Name "echo" != params.name "add"',
    ]);
  });
});
