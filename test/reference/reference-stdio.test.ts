/**
 * `mcptap reference --stdio` against the official clients: SDK 1.x (legacy era, initialize)
 * and SDK 2.x with version negotiation (2026-07-28 era, server/discover). Requires the build.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { MCPTAP } from '../helpers/paths.js';

const SERVER = { command: process.execPath, args: [MCPTAP, 'reference', '--stdio', '--log-level', 'warn'] };
const TOOLS = ['clock', 'delay', 'echo', 'fail', 'in-flight', 'payload', 'progress', 'rpc-error', 'trigger'];

function textOf(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  return content[0]?.text ?? '';
}

/** Records `notifications/progress` as the client transport delivers them (wraps, then forwards). */
function countProgress(transport: { onmessage?: (msg: never, extra?: never) => void }): { progress: number[] } {
  const seen = { progress: [] as number[] };
  const deliver = transport.onmessage!;
  transport.onmessage = (msg: never, extra?: never) => {
    const m = msg as { method?: string; params?: { progress?: number } };
    if (m.method === 'notifications/progress') seen.progress.push(m.params?.progress ?? -1);
    deliver(msg, extra);
  };
  return seen;
}

describe('reference --stdio with the SDK 1.x client (legacy era)', () => {
  const client = new LegacyClient({ name: 'ref-test-v1', version: '1.0.0' });
  const transport = new LegacyStdioTransport({ ...SERVER, stderr: 'pipe' });

  beforeAll(async () => {
    await client.connect(transport);
  });
  afterAll(async () => {
    await client.close();
  });

  it('initializes at the latest legacy revision and lists every tool', async () => {
    expect(client.getServerVersion()?.name).toBe('mcptap-reference');
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
  });

  it('echo, delay, fail and payload answer as their arguments say', async () => {
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'héllo' } }))).toBe('héllo');
    expect(textOf(await client.callTool({ name: 'delay', arguments: { ms: 20 } }))).toBe('delayed 20 ms');
    const failed = await client.callTool({ name: 'fail', arguments: { message: 'nope' } });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'nope' }] });
    expect(textOf(await client.callTool({ name: 'payload', arguments: { kb: 100 } }))).toHaveLength(100 * 1024);
    const bad = await client.callTool({ name: 'delay', arguments: { ms: -1 } });
    expect(bad.isError).toBe(true);
    const now = textOf(await client.callTool({ name: 'clock', arguments: {} }));
    expect(now).toMatch(/^now: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('progress sends one notification per step when the request has a progressToken', async () => {
    // Counted where the client receives messages: SDK 1.x dispatches notifications a microtask
    // late, so `onprogress` misses the last one when it shares a read with the response.
    const wire = countProgress(transport);
    const result = await client.callTool({ name: 'progress', arguments: { steps: 4, intervalMs: 10 } }, undefined, {
      onprogress: () => undefined,
    });
    expect(wire.progress).toEqual([1, 2, 3, 4]);
    expect(textOf(result)).toContain('4 steps');
  });

  it('rpc-error answers with the JSON-RPC error code the caller picked (default -32603)', async () => {
    const err = await client.callTool({ name: 'rpc-error', arguments: { code: -32050, message: 'picked', data: { k: 1 } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect(err).toMatchObject({ code: -32050, data: { k: 1 } });
    const dflt = await client.callTool({ name: 'rpc-error', arguments: {} }).catch((e: unknown) => e);
    expect(dflt).toMatchObject({ code: -32603 });
  });

  it('serves the info resource and the greet prompt', async () => {
    const read = await client.readResource({ uri: 'mcptap://reference/info' });
    const info = JSON.parse((read.contents[0] as { text: string }).text) as Record<string, unknown>;
    expect(info).toMatchObject({ era: 'legacy', transport: 'stdio', honorCancelDefault: true, stall: null });
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Hello, Ada!' });
  });
});

describe('reference --stdio with the SDK 2.x client (2026-07-28 era)', () => {
  const client = new ModernClient({ name: 'ref-test-v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const transport = new ModernStdioTransport({ ...SERVER, stderr: 'pipe' });

  beforeAll(async () => {
    await client.connect(transport);
  });
  afterAll(async () => {
    await client.close();
  });

  it('negotiates 2026-07-28 through server/discover', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const read = await client.readResource({ uri: 'mcptap://reference/info' });
    const info = JSON.parse((read.contents[0] as { text: string }).text) as Record<string, unknown>;
    expect(info.era).toBe('modern');
  });

  it('calls tools with the per-request envelope: progress, isError, JSON-RPC error code', async () => {
    const wire = countProgress(transport);
    await client.callTool({ name: 'progress', arguments: { steps: 3, intervalMs: 10 } }, { onprogress: () => undefined });
    expect(wire.progress).toEqual([1, 2, 3]);
    expect(await client.callTool({ name: 'fail', arguments: {} })).toMatchObject({ isError: true });
    const err = await client.callTool({ name: 'rpc-error', arguments: { code: -32099 } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32099 });
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Bo' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Hello, Bo!' });
  });
});
