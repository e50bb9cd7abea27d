/**
 * The legacy era through the HTTP tap, with real peers: server-everything `streamableHttp`
 * (stateful, SSE responses, GET stream, DELETE) and its deprecated `sse` transport, driven by the
 * SDK 1.x client. Every answer through the tap must deep-equal the direct run, and the pipeline
 * (and the SQLite recording) must hold the exchanges with the right classes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap } from '../../src/tap/http-tap.js';
import type { TapEvent } from '../../src/model/events.js';
import type { Exchange } from '../../src/model/exchange.js';
import { openTapPipeline } from '../../src/pipeline/tap-pipeline.js';
import { recordingOptions } from '../../src/pipeline/recording-options.js';
import { teeInput } from '../../src/pipeline/pipeline-input.js';
import { silentLogger } from '../../src/util/logger.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';

type Transport = StreamableHTTPClientTransport | SSEClientTransport;

/** The scripted conversation; returns every answer (or error) in order. */
async function converse(makeTransport: () => Transport): Promise<{ answers: unknown[]; progress: unknown[] }> {
  const client = new Client({ name: 'tap-test', version: '1.0.0' });
  const transport = makeTransport();
  await client.connect(transport);
  const answers: unknown[] = [];
  const progress: unknown[] = [];
  const tools = await client.listTools();
  answers.push(tools.tools.map((t) => t.name).sort());
  answers.push(await client.callTool({ name: 'echo', arguments: { message: 'hello ✓' } }));
  answers.push(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } }));
  answers.push(await client.callTool({ name: 'get-tiny-image', arguments: {} }));
  answers.push(
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p),
    }),
  );
  answers.push(await client.callTool({ name: 'get-sum', arguments: { a: 'not a number' } }));
  answers.push(
    await client
      .request({ method: 'no/such-method', params: {} }, ResultSchema)
      .catch((e: { code?: number; message?: string }) => ({ code: e.code, message: e.message })),
  );
  if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession();
  await client.close();
  return { answers, progress };
}

function byMethod(exchanges: Exchange[], method: string, target?: string): Exchange[] {
  return exchanges.filter((e) => e.method === method && (target === undefined || e.target === target));
}

describe('HTTP tap, legacy era, server-everything', () => {
  let peer: ChildPeer;
  let ssePeer: ChildPeer;

  beforeAll(async () => {
    [peer, ssePeer] = await Promise.all([startEverything('streamableHttp'), startEverything('sse')]);
  });
  afterAll(async () => {
    await Promise.all([peer?.stop(), ssePeer?.stop()]);
  });

  it('streamableHttp: same answers as direct; exchanges, progress, session and recording right', async () => {
    const direct = await converse(() => new StreamableHTTPClientTransport(new URL(peer.url)));
    const pipeline = new Pipeline({ logger: silentLogger });
    const events: TapEvent[] = [];
    pipeline.subscribe((e) => events.push(e));
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-http-'));
    // The recording takes the tap's one path (worker, spool, indexer); the events come from a pipeline beside it.
    const sinks = await openTapPipeline({
      recording: recordingOptions(join(dir, 'rec.db')),
      transport: 'http',
      target: peer.url,
      logger: silentLogger,
      logLevel: 'silent',
    });
    const tap: HttpTap = await startHttpTap({ upstream: peer.url, port: 0, pipeline: teeInput(sinks.input, pipeline), redactor: sinks.redactor });
    let viaTap: Awaited<ReturnType<typeof converse>>;
    try {
      viaTap = await converse(() => new StreamableHTTPClientTransport(new URL(tap.url)));
    } finally {
      await tap.close();
    }
    expect(viaTap.answers).toEqual(direct.answers);
    expect(viaTap.progress).toEqual(direct.progress);

    const done = events.filter((e) => e.type === 'exchange-completed').map((e) => e.exchange);
    const init = byMethod(done, 'initialize')[0]!;
    expect(init.outcome).toBe('ok');
    const sid = init.sessionId!;
    expect(sid).toMatch(/[0-9a-f-]{36}/);
    expect(init.connectionId).toBe(`http:${sid}`);
    expect(init.transport?.httpStatus).toBe(200);
    expect(init.transport?.responseHeadersUs).toBeGreaterThanOrEqual(init.startUs);
    for (const e of done) expect(e.sessionId).toBe(sid);
    expect(byMethod(done, 'tools/list')[0]!.outcome).toBe('ok');
    expect(byMethod(done, 'tools/call', 'echo')[0]!.outcome).toBe('ok');
    expect(byMethod(done, 'tools/call', 'get-tiny-image')[0]!.outcome).toBe('ok');
    const sums = byMethod(done, 'tools/call', 'get-sum');
    expect(sums.map((e) => e.outcome).sort()).toEqual(['ok', 'tool_error']);
    expect(sums.find((e) => e.outcome === 'tool_error')!.isError).toBe(true);
    const unknown = byMethod(done, 'no/such-method')[0]!;
    expect(unknown.outcome).toBe('jsonrpc_error');
    expect(unknown.errorCode).toBe(-32601);
    const long = byMethod(done, 'tools/call', 'trigger-long-running-operation')[0]!;
    expect(long.outcome).toBe('ok');
    expect(long.progress.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(long.transport?.eventTimesUs?.length).toBe(4); // 3 progress events and the response
    expect(long.transport!.firstEventUs!).toBeGreaterThan(long.startUs);
    expect(long.endUs!).toBeGreaterThan(long.transport!.eventTimesUs![2]!);
    expect(long.endUs!).toBe(long.transport!.eventTimesUs![3]!);

    const opened = events.filter((e) => e.type === 'connection-opened');
    const closed = events.filter((e) => e.type === 'connection-closed');
    expect(opened.some((e) => e.type === 'connection-opened' && e.connection.sessionId === sid)).toBe(true);
    expect(closed.find((e) => e.type === 'connection-closed' && e.connectionId === `http:${sid}`)).toMatchObject({ reason: 'session_deleted' });
    expect(events.filter((e) => e.type === 'anomaly')).toEqual([]);
    expect(pipeline.errors).toBe(0);

    await pipeline.close();
    await sinks.close();
    const store = RecordingStore.open(join(dir, 'rec.db'));
    try {
      const rid = store.latestRecordingId()!;
      const rows = store.exchanges({ recordingId: rid });
      expect(rows.length).toBe(done.length);
      const counts: Record<string, number> = {};
      for (const r of rows) counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
      expect(counts).toEqual({ ok: done.length - 2, tool_error: 1, jsonrpc_error: 1 });
      expect(rows.find((r) => r.method === 'no/such-method')?.errorCode).toBe(-32601);
    } finally {
      store.close();
    }
  });

  it('deprecated HTTP+SSE transport: answers equal, correlated on the GET stream', async () => {
    const direct = await converse(() => new SSEClientTransport(new URL(ssePeer.url)));
    const pipeline = new Pipeline({ logger: silentLogger });
    const events: TapEvent[] = [];
    pipeline.subscribe((e) => events.push(e));
    const tap = await startHttpTap({ upstream: ssePeer.url, port: 0, pipeline });
    let viaTap: Awaited<ReturnType<typeof converse>>;
    try {
      viaTap = await converse(() => new SSEClientTransport(new URL(tap.url)));
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      await tap.close();
      await pipeline.close();
    }
    expect(viaTap.answers).toEqual(direct.answers);
    expect(viaTap.progress).toEqual(direct.progress);
    const done = events.filter((e) => e.type === 'exchange-completed').map((e) => e.exchange);
    expect(byMethod(done, 'initialize')[0]!.outcome).toBe('ok');
    const sid = byMethod(done, 'initialize')[0]!.connectionId.replace(/^http:/, '');
    for (const e of done) expect(e.connectionId).toBe(`http:${sid}`);
    expect(done.map((e) => e.outcome).sort()).toEqual(['jsonrpc_error', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'tool_error']);
    expect(byMethod(done, 'tools/call', 'trigger-long-running-operation')[0]!.progress.length).toBe(3);
    expect(events.filter((e) => e.type === 'exchange-orphaned')).toEqual([]);
    expect(events.find((e) => e.type === 'connection-closed' && e.connectionId === `http:${sid}`)).toMatchObject({ reason: 'sse_stream_closed' });
  });
});
