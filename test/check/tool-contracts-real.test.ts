/**
 * Tool contracts on real servers: the SDK 1.x notes server (its `search` tool has an outputSchema)
 * recorded through the built tap, over stdio and over Streamable HTTP (where declarations are kept
 * per session), driven by the SDK client. A compliant server yields no error findings; the one
 * call with bad arguments, which the server rejects, is the client's warning. server-everything
 * (stdio) adds structured output, prompts, resources and resource templates to the same verdict.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/check/finding.js';
import { toolContracts } from '../../src/check/rules/tool-contracts.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { BIN, FIXTURES } from '../helpers/paths.js';
import { notesCommand, startNotesHttp } from '../helpers/notes-peer.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { check, recordingEnded } from './tool-contracts-tap.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-contracts-real-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a host does: list, call each kind of tool, then once with a wrong argument type. */
async function session(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toContain('search');
  const found = await client.callTool({ name: 'search', arguments: { query: 'milk' } });
  expect(found.structuredContent).toEqual({ results: [{ id: 'n1', title: 'groceries' }] });
  await client.callTool({ name: 'create_note', arguments: { title: 't', body: 'b' } });
  expect((await client.callTool({ name: 'delete_note', arguments: { id: 'none' } })).isError).toBe(true);
  // The SDK server rejects it (isError or -32602, by version); SDK clients do not check arguments.
  await client.callTool({ name: 'search', arguments: { query: 5 } }).catch(() => undefined);
}

/** Records what `drive` does with the notes server (`flags`) through the HTTP tap; the contract findings. */
async function httpFindings(name: string, flags: string[], drive: (client: Client) => Promise<unknown>): Promise<Finding[]> {
  const db = join(dir, `${name}.db`);
  const notes = await startNotesHttp(flags);
  const tap = await startHttpTapCli(notes.url, ['--record', db, '--log-level', 'silent']);
  try {
    const client = new Client({ name: 'contracts-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(tap.url)));
    await drive(client);
    await client.close();
  } finally {
    tap.child.kill('SIGTERM');
    await tap.exited;
    await notes.stop();
  }
  return check(db, toolContracts);
}

function expectOnlyTheBadArguments(findings: Finding[]): void {
  expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
  expect(findings.map((f) => [f.ruleId, f.severity, f.where.tool, f.pointer, f.schemaRule])).toEqual([
    ['contract/arguments-invalid', 'warning', 'search', '/params/arguments/query', '#/properties/query/type'],
  ]);
}

describe('the notes server through the tap', () => {
  it('stdio: no error findings, the rejected bad call a warning', async () => {
    const db = join(dir, 'stdio.db');
    const tapped = await connectThroughTap(['--record', db], notesCommand());
    try {
      await session(tapped.client);
    } finally {
      await tapped.close();
    }
    await recordingEnded(db); // the tap ends with its server and then finishes the recording
    expectOnlyTheBadArguments(check(db, toolContracts));
  }, 60_000);

  it('Streamable HTTP: declarations per session, no error findings', async () => {
    const findings = await httpFindings('http', [], session);
    expectOnlyTheBadArguments(findings);
    expect(findings[0]!.where.sessionId).toEqual(expect.any(String));
  }, 60_000);
});

describe('a stateless Streamable HTTP server (a new server and transport per POST, as the SDK README shows)', () => {
  const statelessFindings = (name: string, flags: string[], drive: (client: Client) => Promise<unknown>) =>
    httpFindings(name, ['--stateless', ...flags], drive);

  it('an honest build: no error findings, the rejected bad call a warning', async () => {
    // Several at once: the client's pool spreads them over its sockets, the list on one, calls on others.
    const drive = (client: Client) => Promise.all([session(client), client.listTools(), client.callTool({ name: 'search', arguments: { query: 'eggs' } })]);
    expectOnlyTheBadArguments(await statelessFindings('stateless', [], drive));
  }, 60_000);

  it('a build whose answers break its declared outputSchema: contract/output-invalid on each search', async () => {
    // The SDK client rejects such an answer itself; the recording keeps it.
    const search = (client: Client) => client.callTool({ name: 'search', arguments: { query: 'milk' } }).catch(() => undefined);
    const findings = await statelessFindings('stateless-bad', ['--bad-output'], async (client) => {
      await client.listTools();
      await Promise.all([search(client), search(client)]);
    });
    const invalid = findings.filter((f) => f.ruleId === 'contract/output-invalid');
    expect(invalid.map((f) => [f.severity, f.where.tool, f.pointer])).toEqual([
      ['error', 'search', '/result/structuredContent/results/0/title'],
      ['error', 'search', '/result/structuredContent/results/0/title'],
    ]);
  }, 60_000);
});

describe('an SDK 1.x McpServer publishing additionalProperties false, given an extra key', () => {
  it('stdio: zod drops the key and answers; a warning naming it, not an error', async () => {
    const db = join(dir, 'extra.db');
    const tapped = await connectThroughTap(['--record', db], [process.execPath, join(FIXTURES, 'zod3-server.mjs')]);
    try {
      const { tools } = await tapped.client.listTools();
      expect(tools[0]!.inputSchema).toMatchObject({ additionalProperties: false });
      const found = await tapped.client.callTool({ name: 'search', arguments: { query: 'milk', verbose: true } });
      expect(found.isError).toBeFalsy();
    } finally {
      await tapped.close();
    }
    await recordingEnded(db);
    const findings = check(db, toolContracts);
    expect(findings.map((f) => [f.ruleId, f.severity, f.where.tool, f.pointer])).toEqual([
      ['contract/arguments-extra-accepted', 'warning', 'search', '/params/arguments/verbose'],
    ]);
    expect(findings[0]!.message).toContain('"verbose"');
  }, 60_000);
});

describe('server-everything through the tap', () => {
  it('stdio: tools, prompts, resources and templates in use yield no error findings', async () => {
    const db = join(dir, 'everything.db');
    const tapped = await connectThroughTap(['--record', db], [join(BIN, 'mcp-server-everything'), 'stdio']);
    const client = tapped.client;
    try {
      await client.listTools();
      const weather = await client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } });
      expect(weather.structuredContent).toBeDefined();
      await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
      await client.callTool({ name: 'get-sum', arguments: { a: 'one', b: 2 } }).catch(() => undefined);
      const { prompts } = await client.listPrompts();
      for (const p of prompts) {
        const args = Object.fromEntries((p.arguments ?? []).filter((a) => a.required).map((a) => [a.name, 'x']));
        await client.getPrompt({ name: p.name, arguments: args }).catch(() => undefined);
      }
      const { resources } = await client.listResources();
      const { resourceTemplates } = await client.listResourceTemplates();
      expect([prompts.length > 0, resources.length > 0, resourceTemplates.length > 0]).toEqual([true, true, true]);
      await client.readResource({ uri: resources[0]!.uri });
      for (const t of resourceTemplates) await client.readResource({ uri: t.uriTemplate.replace(/\{[^}]*\}/g, '1') }).catch(() => undefined);
    } finally {
      await tapped.close();
    }
    await recordingEnded(db);
    const findings = check(db, toolContracts);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    // The one bad call, rejected by the server, is the client's warning.
    expect(findings.map((f) => [f.ruleId, f.where.tool, f.pointer])).toEqual([['contract/arguments-invalid', 'get-sum', '/params/arguments/a']]);
  }, 60_000);
});
