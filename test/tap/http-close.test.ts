/**
 * Closing the HTTP tap while clients still hold keep-alive connections: every connection must be
 * ended in the pipeline before close() resolves, so closing the sinks right after loses nothing.
 */
import { modernToolCallHeaders } from '../helpers/http-peers.js';
import { expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { openTapPipeline } from '../../src/pipeline/tap-pipeline.js';
import { recordingOptions } from '../../src/pipeline/recording-options.js';
import { startHttpTap } from '../../src/tap/http-tap.js';
import { startReferenceHttpServer } from '../../src/reference/reference-server.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { createLogger } from '../../src/util/logger.js';

it('ends every client connection before close() resolves; the recorder drops nothing', async () => {
  const db = join(mkdtempSync(join(tmpdir(), 'mcptap-close-')), 'close.db');
  const server = await startReferenceHttpServer({ port: 0 });
  const logger = createLogger('silent');
  const sinks = await openTapPipeline({ recording: recordingOptions(db), transport: 'http', target: server.url, logger, logLevel: 'silent' });
  const tap = await startHttpTap({ upstream: new URL(server.url), port: 0, pipeline: sinks.input, redactor: sinks.redactor, logger });
  const url = new URL(tap.url);
  const pool = new Pool(url.origin, { connections: 6 });
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  await Promise.all(
    Array.from({ length: 24 }, async (_, i) => {
      const res = await pool.request({
        path: url.pathname,
        method: 'POST',
        headers: modernToolCallHeaders('echo'),
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `t${i}` }, _meta: meta } }),
      });
      await res.body.text();
    }),
  );
  await tap.close(); // the pool still holds its keep-alive connections
  const lines = await sinks.close();
  await pool.destroy();
  await server.close();
  expect(lines).toEqual([]);
  const store = RecordingStore.open(db);
  try {
    const rec = store.listRecordings()[0]!;
    expect(rec.droppedQueue + rec.droppedWrite).toBe(0);
    const conns = store.connections(rec.id);
    expect(conns.length).toBeGreaterThan(0);
    expect(conns.filter((c) => c.closedUs === undefined)).toEqual([]);
    expect(store.exchanges({ recordingId: rec.id }).filter((e) => e.outcome === 'ok')).toHaveLength(24);
  } finally {
    store.close();
  }
});
