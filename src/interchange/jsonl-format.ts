/**
 * mcptap's JSONL exchange format, version 1 (docs/jsonl-format.md): one JSON object per line, a
 * header first, then one line per JSON-RPC message (or batch) as it crossed the wire, plus optional
 * connection and stream-end lines. Pure: the line types, their encoding and a validating decoder
 * whose every complaint names `file:line: field`.
 */
import { McptapError } from '../errors.js';
import type { Transport } from '../model/events.js';
import type { Channel, Direction } from '../model/frame.js';

export const JSONL_VERSION = 1;

export interface JsonlHeader {
  mcptap: 'jsonl';
  version: number;
  recording?: {
    transport?: Transport;
    target?: string;
    started?: string;
    ended?: string;
    /** Why the recording may lack traffic (its tap was killed, it was not closed): kept by import. */
    incomplete?: string;
    mcptapVersion?: string;
    id?: number;
  };
}

/** HTTP facts of one message (all optional). */
export interface JsonlHttp {
  /** The HTTP request/response stream the message travelled on; unique within the connection. */
  stream?: string;
  status?: number;
  /** Request headers as recorded (lower-case names; secrets already tokens). */
  headers?: Record<string, string>;
  sseId?: string;
  sseEvent?: string;
  /** `MCP-Protocol-Version` header. */
  protocolVersion?: string;
  responseHeaders?: string | number;
  streamEnd?: string | number;
}

/** A message (`message`), a line that was not one (`invalid`), or a server log line (`stderr`). */
export interface JsonlMessageLine {
  t: string | number;
  dir: Direction;
  conn?: string;
  transport?: Transport;
  channel?: Channel;
  session?: string;
  http?: JsonlHttp;
  message?: unknown;
  invalid?: string;
  stderr?: string;
}

export interface JsonlOpenLine {
  event: 'open';
  t: string | number;
  conn: string;
  transport?: Transport;
  target?: string;
  session?: string;
  pid?: number;
  peer?: { address?: string; port?: number; httpVersion?: string };
}

export interface JsonlCloseLine {
  event: 'close';
  t: string | number;
  conn: string;
  reason?: string;
  exitCode?: number | null;
  signal?: string | null;
  /** Why the requests still in flight failed (e.g. `child_exit`). */
  errorClass?: string;
}

/** An HTTP response stream ended before answering its requests: the client closed it, or it failed. */
export interface JsonlStreamEndLine {
  event: 'stream-end';
  t: string | number;
  conn: string;
  stream: string;
  outcome: 'cancelled' | 'transport_error';
  errorClass?: string;
  status?: number;
}

export type JsonlLine = JsonlMessageLine | JsonlOpenLine | JsonlCloseLine | JsonlStreamEndLine;

/** Microseconds since the epoch as ISO 8601 with six fractional digits (`2026-12-03T07:28:55.123456Z`). */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${String(Math.floor(us) - Math.floor(us / 1_000_000) * 1_000_000).padStart(6, '0')}Z`;
}

const ISO_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;

/** A `t`-style time (ISO 8601 string, or a number of µs since the epoch) in µs; undefined when it is neither. */
export function parseTimeUs(t: unknown): number | undefined {
  if (typeof t === 'number') return Number.isSafeInteger(t) && t >= 0 ? t : undefined;
  if (typeof t !== 'string') return undefined;
  const m = ISO_RE.exec(t);
  if (!m) return undefined;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  const fraction = Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
  return seconds * 1000 + fraction;
}

/** Where a line came from, for errors. */
export interface LinePlace {
  file: string;
  line: number;
}

export function importError(at: LinePlace, field: string, message: string): McptapError {
  return new McptapError('MCPTAP_IMPORT_INVALID', `${at.file}:${at.line}: ${field}: ${message}`);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks one field; `kind` names what was expected in the error. */
function field<T>(o: Obj, name: string, at: LinePlace, ok: (v: unknown) => boolean, kind: string, required: boolean, prefix = ''): T | undefined {
  const v = o[name];
  if (v === undefined) {
    if (required) throw importError(at, prefix + name, `missing (expected ${kind})`);
    return undefined;
  }
  if (!ok(v)) throw importError(at, prefix + name, `expected ${kind}, got ${JSON.stringify(v)?.slice(0, 80)}`);
  return v as T;
}

const str = (v: unknown) => typeof v === 'string';
const nonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0;
const int = (v: unknown) => Number.isSafeInteger(v);
const time = (v: unknown) => parseTimeUs(v) !== undefined;
const oneOf =
  (...values: string[]) =>
  (v: unknown) =>
    typeof v === 'string' && values.includes(v);
const TIME = 'an ISO 8601 time or µs since the epoch';

function parseJson(text: string, at: LinePlace): Obj {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw importError(at, '(line)', `not JSON: ${(err as Error).message}`);
  }
  if (!isObj(value)) throw importError(at, '(line)', 'expected a JSON object');
  return value;
}

/** The first line: `{"mcptap":"jsonl","version":1,...}`. */
export function decodeHeader(text: string, at: LinePlace): JsonlHeader {
  const o = parseJson(text, at);
  if (o.mcptap !== 'jsonl') throw importError(at, 'mcptap', 'the first line must be the header {"mcptap":"jsonl","version":1}');
  const version = field<number>(o, 'version', at, int, 'an integer', true)!;
  if (version > JSONL_VERSION) throw importError(at, 'version', `version ${version} is newer than this mcptap reads (${JSONL_VERSION})`);
  const r = field<Obj>(o, 'recording', at, isObj, 'an object', false);
  if (r) {
    field(r, 'transport', at, oneOf('stdio', 'http'), '"stdio" or "http"', false, 'recording.');
    field(r, 'target', at, str, 'a string', false, 'recording.');
    field(r, 'started', at, time, TIME, false, 'recording.');
    field(r, 'ended', at, time, TIME, false, 'recording.');
    field(r, 'incomplete', at, str, 'a string', false, 'recording.');
  }
  return o as unknown as JsonlHeader;
}

/** Any later line. */
export function decodeLine(text: string, at: LinePlace): JsonlLine {
  const o = parseJson(text, at);
  field(o, 't', at, time, TIME, true);
  const event = field<string>(o, 'event', at, oneOf('open', 'close', 'stream-end'), '"open", "close" or "stream-end"', false);
  if (event !== undefined) {
    field(o, 'conn', at, nonEmpty, 'a connection id (string)', true);
    if (event === 'open') field(o, 'transport', at, oneOf('stdio', 'http'), '"stdio" or "http"', false);
    if (event === 'stream-end') {
      field(o, 'stream', at, nonEmpty, 'a stream id (string)', true);
      field(o, 'outcome', at, oneOf('cancelled', 'transport_error'), '"cancelled" or "transport_error"', true);
    }
    return o as unknown as JsonlLine;
  }
  field(o, 'dir', at, oneOf('c2s', 's2c'), '"c2s" (client to server) or "s2c"', true);
  field(o, 'conn', at, nonEmpty, 'a connection id (string)', false);
  field(o, 'transport', at, oneOf('stdio', 'http'), '"stdio" or "http"', false);
  field(o, 'channel', at, oneOf('stdio', 'stderr', 'http-body', 'sse'), '"stdio", "stderr", "http-body" or "sse"', false);
  field(o, 'session', at, str, 'a string', false);
  const http = field<Obj>(o, 'http', at, isObj, 'an object', false);
  if (http) decodeHttp(http, at);
  const bodies = ['message', 'invalid', 'stderr'].filter((k) => o[k] !== undefined);
  if (bodies.length === 0) throw importError(at, 'message', 'missing (expected the JSON-RPC message; or "invalid" or "stderr" text)');
  if (bodies.length > 1) throw importError(at, bodies[1]!, `a line carries one of "message", "invalid", "stderr", not ${bodies.join(' and ')}`);
  if (o.message !== undefined && !isObj(o.message) && !Array.isArray(o.message))
    throw importError(at, 'message', 'expected a JSON-RPC message (an object) or a batch (an array)');
  field(o, 'invalid', at, str, 'a string', false);
  field(o, 'stderr', at, str, 'a string', false);
  return o as unknown as JsonlLine;
}

function decodeHttp(h: Obj, at: LinePlace): void {
  const f = (name: string, ok: (v: unknown) => boolean, kind: string) => field(h, name, at, ok, kind, false, 'http.');
  f('stream', str, 'a string');
  f('status', int, 'an integer');
  f('headers', (v) => isObj(v) && Object.values(v).every(str), 'an object of string values');
  f('sseId', str, 'a string');
  f('sseEvent', str, 'a string');
  f('protocolVersion', str, 'a string');
  f('responseHeaders', time, TIME);
  f('streamEnd', time, TIME);
}
