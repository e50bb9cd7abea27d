/**
 * The recorder behind the real Pipeline (real ndjson decoder and correlator): what events() reads
 * back equals what the pipeline emitted, as it was at emission time — even though the correlator
 * keeps mutating an in-flight Exchange after announcing it. The bytes are hand-written NDJSON of a
 * legacy stdio session (so every outcome is known); real peers are exercised by the e2e suites.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { T0 } from './sample-events.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-recpipe-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Deep copy that keeps Buffers as Buffers (structuredClone would turn them into Uint8Arrays). */
function clone<T>(v: T): T {
  if (Buffer.isBuffer(v)) return Buffer.from(v) as T;
  if (Array.isArray(v)) return v.map(clone) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])) as T;
  return v;
}

const C2S: [number, string][] = [
  [1, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}'],
  [3, '{"jsonrpc":"2.0","method":"notifications/initialized"}'],
  [4, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":1}}}'],
  [5, '{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"fail","arguments":{}}}'],
  [6, '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delay","arguments":{"ms":5000}}}'],
  [9, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"bored"}}'],
  [12, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}'],
];
const S2C: [number, string][] = [
  [2, '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}'],
  [7, '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":2}}'],
  [8, '{"jsonrpc":"2.0","id":"1","result":{"content":[{"type":"text","text":"no"}],"isError":true}}'],
  [10, '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'],
  [11, '{"jsonrpc":"2.0","id":77,"result":{}}'],
  [11.5, 'Debug: not JSON at all'],
];

it('events() reads back exactly what the pipeline emitted', async () => {
  const path = join(dir, 'rec.db');
  const clock = { nowUs: () => T0 + 20_000 };
  const pipeline = new Pipeline({ clock, logger: silentLogger, tickMs: 0 });
  const seen: TapEvent[] = [];
  pipeline.subscribe((e) => seen.push(clone(e)));
  const rec = new SqliteRecorder({
    path,
    recording: { transport: 'stdio', target: 'node s.mjs', startedUs: T0, mcptapVersion: 't' },
    logger: silentLogger,
    clock,
  });
  pipeline.addSink(rec);
  pipeline.openConnection({ connectionId: 'c1', transport: 'stdio', target: 'node s.mjs', pid: 1 }, T0);
  const lines = [...C2S.map(([t, l]) => ({ t, l, d: 'c2s' as const })), ...S2C.map(([t, l]) => ({ t, l, d: 's2c' as const }))].sort((a, b) => a.t - b.t);
  for (const { t, l, d } of lines)
    pipeline.pushChunk({ connectionId: 'c1', direction: d, channel: 'stdio', bytes: Buffer.from(`${l}\n`), timeUs: T0 + t * 1000 });
  pipeline.pushChunk({ connectionId: 'c1', direction: 's2c', channel: 'stderr', bytes: Buffer.from('listening\n'), timeUs: T0 + 12_500 });
  pipeline.closeConnection('c1', { reason: 'child exited', exitCode: 0, signal: null, timeUs: T0 + 13_000 });
  await pipeline.close();
  expect(rec.stats()).toMatchObject({ dropped: 0, errors: 0 });
  expect(new Set(seen.map((e) => e.type)).size).toBe(8);

  const store = RecordingStore.open(path);
  expect([...store.events(rec.recordingId)]).toEqual(seen);
  // Row order among exchanges with the same start time depends on how the recorder batched them.
  const byId = (a: unknown[], b: unknown[]) => JSON.stringify(a).localeCompare(JSON.stringify(b));
  expect(
    store
      .exchanges({ recordingId: rec.recordingId })
      .map((e) => [e.id, e.outcome])
      .sort(byId),
  ).toEqual(
    [
      [0, 'ok'],
      [1, 'ok'],
      ['1', 'tool_error'],
      [2, 'cancelled'],
      [77, 'orphan_response'],
      [3, 'unanswered'],
    ].sort(byId),
  );
  store.close();
});
