/**
 * `mcptap mcp`'s MCP surface on the official SDK 2.x low-level `Server` (as the reference server):
 * tools that query recordings (recording-explorer.ts) and each recording as a resource. One factory
 * serves both protocol eras; the SDK's serving entries pick the era per connection or request.
 * Arguments are checked here against the tools' own schemas: a wrong one is a tool error
 * (`isError`), which a model can read and correct, not a protocol error.
 */
import { Server, ProtocolError, type CallToolResult, type McpServerFactory } from '@modelcontextprotocol/server';
import { McptapError } from '../errors.js';
import { OUTCOMES } from '../model/outcome.js';
import { ErrorCodes } from '../protocol/error-codes.js';
import { VERSION } from '../version.js';
import { DEFAULT_PAGE, MAX_PAGE, type RecordingExplorer, type RecordingRef } from './recording-explorer.js';

export const EXPLORE_SERVER_NAME = 'mcptap-recordings';
const URI_PREFIX = 'mcptap://recording/';

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
type Props = Record<string, Record<string, Json>>;

const REF: Props = {
  file: { type: 'string', description: 'file label as list_recordings gives it (optional when one file is open)' },
  recording: { type: 'integer', minimum: 1, description: 'recording number (default: the file’s latest)' },
};
const PAGE: Props = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, description: `rows per page (default ${DEFAULT_PAGE})` },
  cursor: { type: 'string', description: 'the cursor a previous page returned, for the next page' },
};

interface ToolDef {
  name: string;
  description: string;
  properties: Props;
  required?: string[];
  run(x: RecordingExplorer, args: Record<string, unknown>): unknown;
}

const TOOLS: ToolDef[] = [
  {
    name: 'list_recordings',
    description:
      'The recordings in the open files: file label, recording number, transport, target, duration, exchange and outcome counts, anomalies, INCOMPLETE and drops.',
    properties: {},
    run: (x) => ({ recordings: x.listRecordings() }),
  },
  {
    name: 'find_exchanges',
    description:
      'Exchanges (JSON-RPC requests and what became of them) of one recording, in recorded order, one compact row each (row, id, method, target, outcome, latencyMs, atMs from the recording start, connection, session). ' +
      'All filters optional and combined. Paged: a page says how many more match and the cursor for the next. Use get_exchange with a row for the messages.',
    properties: {
      ...REF,
      method: { type: 'string', description: 'JSON-RPC method, e.g. tools/call' },
      tool: { type: 'string', description: 'tool name of a tools/call' },
      target: { type: 'string', description: 'tool, prompt or resource URI of any method' },
      outcome: { type: 'string', enum: [...OUTCOMES, 'pending'] },
      connection: { type: 'string', description: 'connection id' },
      session: { type: 'string', description: 'MCP session id (HTTP)' },
      minLatencyMs: { type: 'number', minimum: 0 },
      maxLatencyMs: { type: 'number', minimum: 0 },
      text: { type: 'string', description: 'case-insensitive text in the request or response (as recorded, secrets redacted)' },
      slowest: { type: 'boolean', description: 'the slowest first (one page of `limit` rows, no cursor), instead of recorded order' },
      ...PAGE,
    },
    run: (x, a) =>
      x.findExchanges({
        ...refOf(a),
        ...pick(a, ['method', 'tool', 'target', 'outcome', 'text', 'cursor', 'limit', 'slowest']),
        ...(a.connection !== undefined ? { connectionId: a.connection as string } : {}),
        ...(a.session !== undefined ? { sessionId: a.session as string } : {}),
        ...(a.minLatencyMs !== undefined ? { minLatencyUs: (a.minLatencyMs as number) * 1000 } : {}),
        ...(a.maxLatencyMs !== undefined ? { maxLatencyUs: (a.maxLatencyMs as number) * 1000 } : {}),
      }),
  },
  {
    name: 'get_exchange',
    description:
      'One exchange by its row (from find_exchanges): request and response, timings (latency, response headers, first SSE event, stream end), SSE event times, progress, cancellation, its frames with payloads and HTTP headers, and its anomalies. Long payloads are cut at maxChars.',
    properties: {
      ...REF,
      row: { type: 'integer', minimum: 1, description: 'the row of the exchange' },
      maxChars: { type: 'integer', minimum: 100, maximum: 100_000, description: 'characters per payload (default 2000)' },
      maxFrames: { type: 'integer', minimum: 1, maximum: 1000, description: 'frames listed (default 50)' },
    },
    required: ['row'],
    run: (x, a) => x.getExchange({ ...refOf(a), row: a.row as number, ...pick(a, ['maxChars', 'maxFrames']) }),
  },
  {
    name: 'latency_summary',
    description: 'Per method (per tool for tools/call): count, errors, outcomes, latency p50/p90/p99/max in ms.',
    properties: { ...REF, method: { type: 'string', description: 'only this method' } },
    run: (x, a) => x.latencySummary({ ...refOf(a), ...pick(a, ['method']) }),
  },
  {
    name: 'anomalies',
    description:
      'Protocol anomalies of a recording (invalid messages, duplicate ids, orphan responses, drops, check findings, ...), with the count of each kind. Paged.',
    properties: { ...REF, kind: { type: 'string', description: 'only this kind, e.g. invalid_message' }, ...PAGE },
    run: (x, a) => x.anomalies({ ...refOf(a), ...pick(a, ['kind', 'cursor', 'limit']) }),
  },
  {
    name: 'compare_recordings',
    description:
      'Two recordings side by side per method and tool: counts, errors, p50/p90/p99 latency (ms) as [baseline, candidate] with deltas (candidate - baseline), and the outcome counts that changed.',
    properties: {
      baselineFile: REF.file!,
      baselineRecording: REF.recording!,
      candidateFile: REF.file!,
      candidateRecording: REF.recording!,
    },
    required: ['baselineRecording', 'candidateRecording'],
    run: (x, a) =>
      x.compareRecordings({
        baseline: refOf({ file: a.baselineFile, recording: a.baselineRecording }),
        candidate: refOf({ file: a.candidateFile, recording: a.candidateRecording }),
      }),
  },
];

/** The factory both eras are served from: every instance answers from the same open explorer. */
export function exploreServerFactory(explorer: RecordingExplorer): McpServerFactory {
  return () => buildExploreServer(explorer);
}

export function buildExploreServer(explorer: RecordingExplorer): Server {
  const server = new Server(
    { name: EXPLORE_SERVER_NAME, version: VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Recorded MCP traffic (mcptap recordings), read-only. Start with list_recordings, then find_exchanges (filters, paged) and get_exchange for one exchange; latency_summary, anomalies and compare_recordings for aggregates. Secrets were redacted when recorded.',
    },
  );
  server.setRequestHandler('tools/list', () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: { type: 'object' as const, properties: t.properties, additionalProperties: false, ...(t.required ? { required: t.required } : {}) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler('tools/call', (req) => callTool(explorer, req.params.name, req.params.arguments ?? {}));
  server.setRequestHandler('resources/list', () => ({
    resources: explorer.files.flatMap((f) =>
      f.store.listRecordings().map((r) => ({
        uri: recordingUri(f.label, r.id),
        name: `${f.label} recording ${r.id}`,
        mimeType: 'application/json',
        description: `${r.transport} ${r.target}: ${r.exchanges} exchanges`,
      })),
    ),
  }));
  server.setRequestHandler('resources/read', (req) => {
    const ref = parseRecordingUri(req.params.uri);
    if (!ref) throw new ProtocolError(ErrorCodes.ResourceNotFound, `Resource ${req.params.uri} not found`, { uri: req.params.uri });
    try {
      const text = JSON.stringify({
        recording: recordingOf(explorer, ref),
        latency: explorer.latencySummary(ref),
        firstExchanges: explorer.findExchanges(ref),
      });
      return { contents: [{ uri: req.params.uri, mimeType: 'application/json', text }] };
    } catch (err) {
      if (err instanceof McptapError) throw new ProtocolError(ErrorCodes.ResourceNotFound, err.message, { uri: req.params.uri });
      throw err;
    }
  });
  return server;
}

/** `mcptap://recording/LABEL/N`: the label URI-encoded. */
export function recordingUri(label: string, id: number): string {
  return `${URI_PREFIX}${encodeURIComponent(label)}/${id}`;
}

function parseRecordingUri(uri: string): RecordingRef | undefined {
  if (!uri.startsWith(URI_PREFIX)) return undefined;
  const m = /^([^/]+)\/(\d{1,15})$/.exec(uri.slice(URI_PREFIX.length));
  if (!m) return undefined;
  try {
    return { file: decodeURIComponent(m[1]!), recording: Number(m[2]) };
  } catch {
    return undefined;
  }
}

function recordingOf(explorer: RecordingExplorer, ref: RecordingRef): unknown {
  const { file, recordingId } = explorer.resolve(ref);
  return (explorer.listRecordings() as { file: string; recording: number }[]).find((r) => r.file === file.label && r.recording === recordingId);
}

function callTool(explorer: RecordingExplorer, name: string, args: Record<string, unknown>): CallToolResult {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new ProtocolError(ErrorCodes.InvalidParams, `Tool ${name} not found`);
  try {
    checkArgs(tool, args);
    return { content: [{ type: 'text', text: JSON.stringify(tool.run(explorer, args)) }] };
  } catch (err) {
    if (!(err instanceof McptapError)) throw err;
    return { content: [{ type: 'text', text: err.message }], isError: true };
  }
}

/** The arguments against the tool's schema: known names, the declared types, bounds and enums. */
function checkArgs(tool: ToolDef, args: Record<string, unknown>): void {
  const bad = (msg: string) => new McptapError('MCPTAP_BAD_FLAG', `${tool.name}: ${msg}`);
  for (const r of tool.required ?? []) if (args[r] === undefined) throw bad(`${r} is required`);
  for (const [k, v] of Object.entries(args)) {
    const p = tool.properties[k];
    if (!p) throw bad(`unknown argument ${JSON.stringify(k)}; it takes ${Object.keys(tool.properties).join(', ') || 'none'}`);
    if (v === undefined || v === null) continue;
    const type = p.type as string;
    const ok =
      type === 'string'
        ? typeof v === 'string'
        : type === 'boolean'
          ? typeof v === 'boolean'
          : type === 'integer'
            ? Number.isSafeInteger(v)
            : typeof v === 'number' && Number.isFinite(v);
    if (!ok) throw bad(`${k} must be ${type === 'integer' ? 'an integer' : `a ${type}`}`);
    if (typeof v === 'number' && ((p.minimum !== undefined && v < (p.minimum as number)) || (p.maximum !== undefined && v > (p.maximum as number))))
      throw bad(`${k} must be from ${String(p.minimum ?? '-∞')} to ${String(p.maximum ?? '∞')}`);
    if (p.enum && !(p.enum as unknown[]).includes(v)) throw bad(`${k} must be one of ${(p.enum as string[]).join(', ')}`);
  }
}

function refOf(a: Record<string, unknown>): RecordingRef {
  return { ...(a.file != null ? { file: a.file as string } : {}), ...(a.recording != null ? { recording: a.recording as number } : {}) };
}

function pick<K extends string>(a: Record<string, unknown>, keys: readonly K[]): Partial<Record<K, never>> {
  return Object.fromEntries(keys.filter((k) => a[k] !== undefined && a[k] !== null).map((k) => [k, a[k]])) as Partial<Record<K, never>>;
}
