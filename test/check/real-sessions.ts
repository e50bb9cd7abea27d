/**
 * What a host does with each real server, driven by the SDK 1.x Client: initialize (connect), list,
 * several tools/call (one with an argument of the wrong type, which the server rejects), and the
 * server's prompts, resources and subscriptions where it has them. Each returns nothing: the
 * recording is what the tests judge; answers are asserted only where they show the session is real.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { everythingCallSet } from '../helpers/everything-call-set.js';

/** A call the server is expected to reject (isError or a JSON-RPC error, by SDK version): never thrown. */
const rejected = (p: Promise<unknown>) => p.catch(() => undefined);

/** Connects a client (offering `roots` when given) over `transport`, runs `body`, then ends the session. */
export async function withClient(transport: Transport, body: (c: Client) => Promise<void>, roots?: string[]): Promise<void> {
  const client = new Client({ name: 'mcptap-real-host', version: '1.0.0' }, roots ? { capabilities: { roots: { listChanged: true } } } : {});
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((uri) => ({ uri })) }));
  await client.connect(transport);
  try {
    await body(client);
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession();
    await client.close();
  }
}

/** server-everything: the OTel call set (echo, progress, bad sum, unknown method), prompts, resources, templates. */
export async function everythingSession(client: Client): Promise<void> {
  await everythingCallSet(client, []);
  await client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } });
  const { prompts } = await client.listPrompts();
  for (const p of prompts) {
    const args = Object.fromEntries((p.arguments ?? []).filter((a) => a.required).map((a) => [a.name, 'x']));
    await rejected(client.getPrompt({ name: p.name, arguments: args }));
  }
  const { resources } = await client.listResources();
  await client.readResource({ uri: resources[0]!.uri });
  const { resourceTemplates } = await client.listResourceTemplates();
  for (const t of resourceTemplates) await rejected(client.readResource({ uri: t.uriTemplate.replace(/\{[^}]*\}/g, '1') }));
  expect([prompts.length, resources.length, resourceTemplates.length].every((n) => n > 0)).toBe(true);
}

/** A directory for server-filesystem with a file and a subdirectory in it. */
export function filesystemRoot(dir: string): string {
  const root = join(dir, 'files');
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(join(root, 'docs', 'readme.md'), '# Notes\nfirst line\nsecond line\n');
  return root;
}

/** server-filesystem over `root`: read, write, edit (dry run), list, tree, search, info; outside the root; a bad argument. */
export async function filesystemSession(client: Client, root: string): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toContain('read_text_file');
  const allowed = await client.callTool({ name: 'list_allowed_directories', arguments: {} });
  expect(JSON.stringify(allowed.content)).toContain('files');
  const readme = join(root, 'docs', 'readme.md');
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: readme, head: 2 } });
  expect(read.structuredContent).toEqual({ content: '# Notes\nfirst line' });
  await client.callTool({ name: 'write_file', arguments: { path: join(root, 'todo.txt'), content: 'buy milk\n' } });
  await client.callTool({ name: 'edit_file', arguments: { path: join(root, 'todo.txt'), edits: [{ oldText: 'milk', newText: 'eggs' }], dryRun: true } });
  await client.callTool({ name: 'create_directory', arguments: { path: join(root, 'archive') } });
  await client.callTool({ name: 'list_directory', arguments: { path: root } });
  await client.callTool({ name: 'directory_tree', arguments: { path: root } });
  await client.callTool({ name: 'search_files', arguments: { path: root, pattern: '**/*.md' } });
  await client.callTool({ name: 'get_file_info', arguments: { path: readme } });
  await client.callTool({ name: 'read_multiple_files', arguments: { paths: [readme, join(root, 'todo.txt')] } });
  // Outside the allowed directories: the server answers isError.
  expect((await client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } })).isError).toBe(true);
  await rejected(client.callTool({ name: 'read_text_file', arguments: { path: 5 } }));
}

/** A memory file (JSON lines) path for server-memory, in `dir`. */
export const memoryFile = (dir: string) => join(dir, 'memory.jsonl');

/** server-memory: subscribe to the graph, create, relate, observe, search, open, read (tool and resource); a bad argument. */
export async function memorySession(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toContain('create_entities');
  const { resources } = await client.listResources();
  const graph = resources[0]!.uri;
  await client.subscribeResource({ uri: graph });
  await client.callTool({
    name: 'create_entities',
    arguments: {
      entities: [
        { name: 'Ada', entityType: 'person', observations: ['writes programs'] },
        { name: 'Engine', entityType: 'machine', observations: [] },
      ],
    },
  });
  await client.callTool({ name: 'create_relations', arguments: { relations: [{ from: 'Ada', to: 'Engine', relationType: 'programs' }] } });
  await client.callTool({ name: 'add_observations', arguments: { observations: [{ entityName: 'Engine', contents: ['analytical'] }] } });
  const found = await client.callTool({ name: 'search_nodes', arguments: { query: 'Ada' } });
  expect(JSON.stringify(found.structuredContent)).toContain('writes programs');
  await client.callTool({ name: 'open_nodes', arguments: { names: ['Engine'] } });
  await client.callTool({ name: 'read_graph', arguments: {} });
  await client.readResource({ uri: graph });
  await client.callTool({ name: 'delete_observations', arguments: { deletions: [{ entityName: 'Engine', observations: ['analytical'] }] } });
  await client.unsubscribeResource({ uri: graph });
  await rejected(client.callTool({ name: 'create_entities', arguments: { entities: 'Ada' } }));
}

/** `file://` URI of a directory, as a host offers it among its roots. */
export const rootUri = (dir: string) => pathToFileURL(dir).href;
