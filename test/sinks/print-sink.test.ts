/**
 * The `--print` line of one exchange: its fields in order, text from the traffic made line-safe,
 * colour only when asked. The sink prints completed and orphaned exchanges and nothing else.
 */
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/model/exchange.js';
import { painter } from '../../src/report/format.js';
import { PrintSink, printLine } from '../../src/sinks/print-sink.js';
import { sinkContract } from './sink-contract.js';

const base: Exchange = {
  key: 'c1/c2s/1',
  connectionId: 'c1',
  direction: 'c2s',
  id: 1,
  idType: 'number',
  method: 'tools/call',
  target: 'echo',
  era: 'legacy',
  request: { jsonrpc: '2.0', id: 1, method: 'tools/call' },
  startUs: 1_000_000,
  endUs: 1_012_300,
  latencyUs: 12_300,
  outcome: 'ok',
  isError: false,
  progress: [],
  responseAfterCancel: false,
  requestSeq: 1,
  transport: { eventTimesUs: [1_001_000, 1_002_000] },
};

describe('print line', () => {
  it('says connection, method, tool, outcome, latency and SSE events; plain without colour', () => {
    const line = printLine(base, painter(false));
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} c1 tools\/call echo ok 12\.3ms sse=2$/);
    expect(line).not.toContain('\x1b');
  });

  it('colours on request, and a failure differs from a success', () => {
    const ok = printLine(base, painter(true));
    const failed = printLine({ ...base, outcome: 'jsonrpc_error', errorCode: -32601 }, painter(true));
    expect(ok).toContain('\x1b[32mok');
    expect(failed).toContain('\x1b[31mjsonrpc_error -32601');
  });

  it('escapes control characters and line breaks from the traffic', () => {
    const line = printLine({ ...base, target: 'evil\x1b[2J\nname' }, painter(false));
    expect(line).toContain('evil\\u001b[2J\\nname');
    expect(line).not.toMatch(/[\x1b\n]/);
  });

  it('writes a line for a completed exchange, none for a start or a frame', () => {
    const lines: string[] = [];
    const sink = new PrintSink({ colour: false, writeLine: (l) => lines.push(l) });
    sink.onEvent({ type: 'exchange-started', exchange: base });
    expect(lines).toEqual([]);
    sink.onEvent({ type: 'exchange-completed', exchange: base });
    sink.onEvent({ type: 'exchange-orphaned', exchange: { ...base, outcome: 'orphan_response' } });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/orphan_response/);
    expect(sink.stats()).toMatchObject({ events: 3, errors: 0 });
  });
});

sinkContract('print-sink', () => new PrintSink({ colour: true, writeLine: () => undefined }));
