/**
 * A recording as HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), for browser devtools,
 * proxies and HAR viewers.
 *
 * - HTTP recordings: one entry per HTTP request the tap saw a JSON-RPC body or stream for: each
 *   POST (request body = the JSON-RPC message or batch; response = the JSON body, or the SSE
 *   stream rebuilt from its events) and each standalone GET stream. Headers are the recorded (MCP)
 *   ones, secrets already tokens.
 * - stdio recordings: one entry per JSON-RPC exchange (either direction), method POST, URL
 *   `stdio://mcptap/{method}`, the request and response messages as bodies, status 200 when
 *   answered and 0 when not; `x-mcptap-direction` says who asked.
 */
import type { StoredExchange, StoredFrame, StoredConnection } from '../store/types.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { RecordingInfo } from '../store/types.js';

export interface HarHeader {
  name: string;
  value: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    queryString: HarHeader[];
    postData?: { mimeType: string; text: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    content: { size: number; mimeType: string; text?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  connection?: string;
  comment?: string;
}

export interface Har {
  log: { version: '1.2'; creator: { name: string; version: string }; entries: HarEntry[]; comment?: string };
}

/** The HAR document as text chunks: the entries one at a time, so a large recording is never one string. */
export function* harChunks(store: RecordingStore, recordingId: number, mcptapVersion: string): Generator<string> {
  const info = store.getRecording(recordingId)!;
  const head: Har['log'] = { version: '1.2', creator: { name: 'mcptap', version: mcptapVersion }, comment: harComment(info), entries: [] };
  const [open, close] = JSON.stringify({ log: head }, null, 2).split('"entries": []');
  yield `${open}"entries": [`;
  let n = 0;
  for (const entry of harEntries(store, info)) yield `${n++ === 0 ? '' : ','}\n${indent(JSON.stringify(entry, null, 2), '      ')}`;
  yield `${n > 0 ? '\n    ' : ''}]${close}\n`;
}

/** The HAR document as one object (for small recordings and library use). */
export function recordingHar(store: RecordingStore, recordingId: number, mcptapVersion: string): Har {
  return JSON.parse([...harChunks(store, recordingId, mcptapVersion)].join('')) as Har;
}

function harEntries(store: RecordingStore, info: RecordingInfo): Iterable<HarEntry> {
  return info.transport === 'http' ? httpEntries(store, info) : stdioEntries(store, info.id);
}

const harComment = (info: RecordingInfo) => `mcptap recording ${info.id} of ${info.target} (${info.transport})`;
const indent = (text: string, prefix: string) => text.replace(/^/gm, prefix);

const ms = (us: number) => Math.max(0, Math.round(us / 100) / 10);
const iso = (us: number) => new Date(Math.floor(us / 1000)).toISOString();
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  202: 'Accepted',
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  500: 'Internal Server Error',
};

/** One HTTP request/response stream: its request body frame (if any) and its response frames in order. */
interface Stream {
  connectionId: string;
  request?: StoredFrame;
  responses: StoredFrame[];
}

function httpEntries(store: RecordingStore, info: RecordingInfo): HarEntry[] {
  const streams = new Map<string, Stream>();
  for (const f of store.frames(info.id)) {
    const id = f.context?.streamId;
    if (id === undefined || f.kind === 'log') continue;
    const key = `${f.connectionId}|${id}`;
    let s = streams.get(key);
    if (!s) streams.set(key, (s = { connectionId: f.connectionId, responses: [] }));
    if (f.direction === 'c2s') s.request ??= f;
    else s.responses.push(f);
  }
  const connections = new Map(store.connections(info.id).map((c) => [c.connectionId, c]));
  // In the order the tap first saw each stream.
  return [...streams.values()].map((s) => httpEntry(s, info, connections.get(s.connectionId)));
}

function httpEntry(s: Stream, info: RecordingInfo, conn: StoredConnection | undefined): HarEntry {
  const first = s.request ?? s.responses[0]!;
  const startUs = first.timeUs;
  const httpVersion = `HTTP/${conn?.peer?.httpVersion ?? '1.1'}`;
  const res = s.responses[0];
  const sse = s.responses.some((f) => f.channel === 'sse');
  const text = sse ? s.responses.map(sseEvent).join('') : (res?.raw.toString('utf8') ?? '');
  const status = res?.context?.httpStatus ?? (s.request ? 202 : 200);
  const headersUs = res?.context?.responseHeadersUs ?? res?.timeUs ?? startUs;
  const last = s.responses.at(-1);
  const endUs = Math.max(headersUs, last?.context?.streamEndUs ?? last?.timeUs ?? headersUs);
  const url = urlOf(info.target);
  const sessionId = first.context?.sessionId ?? res?.context?.sessionId;
  const responseHeaders: HarHeader[] = [];
  if (text !== '') responseHeaders.push({ name: 'content-type', value: sse ? 'text/event-stream' : 'application/json' });
  if (sessionId !== undefined) responseHeaders.push({ name: 'mcp-session-id', value: sessionId });
  const body = s.request?.raw.toString('utf8');
  const timings = { send: 0, wait: ms(headersUs - startUs), receive: ms(endUs - headersUs) };
  return {
    startedDateTime: iso(startUs),
    time: Math.round((timings.send + timings.wait + timings.receive) * 10) / 10,
    request: {
      method: s.request ? 'POST' : 'GET',
      url: url.href,
      httpVersion,
      cookies: [],
      headers: Object.entries(s.request?.context?.headers ?? {}).map(([name, value]) => ({ name, value })),
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      ...(body !== undefined ? { postData: { mimeType: 'application/json', text: body } } : {}),
      headersSize: -1,
      bodySize: body !== undefined ? bytes(body) : 0,
    },
    response: {
      status,
      statusText: STATUS_TEXT[status] ?? '',
      httpVersion,
      cookies: [],
      headers: responseHeaders,
      content: { size: bytes(text), mimeType: sse ? 'text/event-stream' : 'application/json', ...(text !== '' ? { text } : {}) },
      redirectURL: '',
      headersSize: -1,
      bodySize: bytes(text),
    },
    cache: {},
    timings,
    connection: s.connectionId,
  };
}

/** The upstream URL (a recording's target is one for HTTP; a redacted one may not parse). */
function urlOf(target: string): URL {
  try {
    return new URL(target);
  } catch {
    return new URL(`http://mcptap.invalid/${encodeURIComponent(target)}`);
  }
}

/** One SSE event as it travelled (the tap recorded its id, name and data). */
function sseEvent(f: StoredFrame): string {
  const c = f.context;
  const lines = [...(c?.sseEventId !== undefined ? [`id: ${c.sseEventId}`] : []), ...(c?.sseEventName !== undefined ? [`event: ${c.sseEventName}`] : [])];
  for (const l of f.raw.toString('utf8').split('\n')) lines.push(`data: ${l}`);
  return `${lines.join('\n')}\n\n`;
}

const PAGE = 1000;

/** A page of exchanges at a time: a stdio recording can hold millions. */
function* stdioEntries(store: RecordingStore, recordingId: number): Generator<HarEntry> {
  for (let offset = 0; ; offset += PAGE) {
    const page = store.exchanges({ recordingId, limit: PAGE, offset });
    for (const ex of page) if (ex.state !== 'orphaned') yield stdioEntry(ex);
    if (page.length < PAGE) return;
  }
}

function stdioEntry(ex: StoredExchange): HarEntry {
  const body = JSON.stringify(ex.request);
  const text = ex.response ? JSON.stringify(ex.response) : '';
  const status = ex.response ? 200 : 0;
  const wait = ex.latencyUs !== undefined ? ms(ex.latencyUs) : 0;
  return {
    startedDateTime: iso(ex.startUs),
    time: wait,
    request: {
      method: 'POST',
      url: `stdio://mcptap/${encodeURIComponent(ex.method)}`,
      httpVersion: 'stdio',
      cookies: [],
      headers: [{ name: 'x-mcptap-direction', value: ex.direction }],
      queryString: [],
      postData: { mimeType: 'application/json', text: body },
      headersSize: -1,
      bodySize: bytes(body),
    },
    response: {
      status,
      statusText: status === 200 ? 'OK' : '',
      httpVersion: 'stdio',
      cookies: [],
      headers: [],
      content: { size: bytes(text), mimeType: 'application/json', ...(text !== '' ? { text } : {}) },
      redirectURL: '',
      headersSize: -1,
      bodySize: bytes(text),
    },
    cache: {},
    timings: { send: 0, wait, receive: 0 },
    connection: ex.connectionId,
    comment: `${ex.method}${ex.target ? ` ${ex.target}` : ''}: ${ex.outcome}`,
  };
}
