/**
 * The demo behind `npm start`: the bundled reference server, run through `mcptap stdio --record`,
 * driven by the real MCP SDK client with a short mix of calls (including a tool error, a JSON-RPC
 * error and a progress call); then a summary read back from the recording.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { McptapError } from '../errors.js';
import { openWithRecording } from '../explore/follow.js';
import { RecordingStore } from '../store/recording-store.js';
import { renderRecordingList } from '../report/recording-list.js';

const MCPTAP_BIN = fileURLToPath(new URL('../../../bin/mcptap.js', import.meta.url));

export interface DemoOptions {
  /** Recording file; a new recording is appended if it exists. */
  db: string;
  /** Echo calls in the mix (the rest is fixed). */
  calls?: number;
  write?: (text: string) => void;
}

export async function runStdioDemo(opts: DemoOptions): Promise<{ recordingId: number }> {
  const write = opts.write ?? ((t: string) => process.stdout.write(t));
  write(`mcptap demo: reference server -> mcptap stdio --record ${opts.db} -> MCP SDK client\n`);
  // Opened once up front: a file that is no recording is said before anything runs, an old one upgraded.
  const before = existsSync(opts.db) ? latestOf(RecordingStore.open(opts.db))?.id : undefined;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPTAP_BIN, 'stdio', '--record', opts.db, '--', process.execPath, MCPTAP_BIN, 'reference', '--stdio'],
    stderr: 'inherit',
  });
  const client = new Client({ name: 'mcptap-demo', version: '1.0.0' });
  await client.connect(transport);
  const n = opts.calls ?? 40;
  try {
    await client.listTools();
    for (let i = 0; i < n; i++) await client.callTool({ name: 'echo', arguments: { text: `hello ${i}` } });
    await Promise.all([10, 20, 40].map((ms) => client.callTool({ name: 'delay', arguments: { ms } })));
    let progress = 0;
    await client.callTool({ name: 'progress', arguments: { steps: 5, intervalMs: 20 } }, CallToolResultSchema, { onprogress: () => progress++ });
    write(`  progress call: ${progress} progress notifications received\n`);
    await client.callTool({ name: 'fail', arguments: { message: 'the demo asked for a tool error' } });
    await client.callTool({ name: 'rpc-error', arguments: { code: -32602, message: 'the demo asked for a JSON-RPC error' } }).catch(() => undefined);
    await client.callTool({ name: 'payload', arguments: { kb: 64 } });
    await client.listResources();
    await client.readResource({ uri: 'mcptap://reference/info' });
    await client.getPrompt({ name: 'greet', arguments: { name: 'operator' } });
  } finally {
    await client.close();
  }
  const ours = await recordingEnd(opts.db, before, { onWaiting: () => write(`  waiting for the tap's indexer to complete ${opts.db}\n`) });
  return summarise(opts.db, ours?.id, write);
}

/**
 * The latest recording, if begun after `after`, once it has ended, or as it is when `timeoutMs` runs out. The
 * SDK's close sends SIGTERM to a tap still closing after 2 s (a busy machine), and the tap then
 * leaves the rest of the file to its indexer: a summary read at once would show part of the run.
 */
export async function recordingEnd(
  db: string,
  after: number | undefined,
  opts: { timeoutMs?: number; intervalMs?: number; onWaiting?: () => void } = {},
): Promise<{ id: number; ended: boolean } | undefined> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (let first = true; ; first = false) {
    const latest = latestRecording(db);
    const ours = latest && (after === undefined || latest.id > after) ? latest : undefined;
    if (ours?.ended || Date.now() >= deadline) return ours;
    if (first) opts.onWaiting?.();
    await sleep(opts.intervalMs ?? 100);
  }
}

/** The file's latest recording, read-only; undefined while the file or its first recording is not there yet. */
function latestRecording(db: string): { id: number; ended: boolean } | undefined {
  const store = openWithRecording(db);
  return store && latestOf(store);
}

/** The store's latest recording and whether it has ended; closes the store. */
function latestOf(store: RecordingStore): { id: number; ended: boolean } | undefined {
  try {
    const id = store.latestRecordingId();
    return id === undefined ? undefined : { id, ended: store.getRecording(id)?.endedUs !== undefined };
  } finally {
    store.close();
  }
}

function summarise(db: string, id: number | undefined, write: (t: string) => void): { recordingId: number } {
  const store = RecordingStore.open(db);
  try {
    const recording = store.listRecordings().find((r) => r.id === id);
    if (!recording)
      throw new McptapError('MCPTAP_NO_RECORDING', `${db} holds no recording of this run: the tap did not record it (its messages above say why)`);
    const summary = store.summary(recording.id);
    write('\n' + renderRecordingList(db, [{ recording, summary }]));
    write(
      `\nThe recording is in ${db} (recording ${recording.id}). Inspect it with:\n` +
        `  mcptap ls ${db}\n` +
        `  mcptap show ${db} --recording ${recording.id}\n` +
        `  mcptap show ${db} --recording ${recording.id} --outcome tool_error\n` +
        `  mcptap show ${db} --recording ${recording.id} --exchange <id>\n`,
    );
    return { recordingId: recording.id };
  } finally {
    store.close();
  }
}
