/**
 * mcptap JSONL (jsonl-format.ts) into a recording, through the live write path: each line becomes
 * what a tap would have told the pipeline (a message body, a connection open or close, a stream
 * end), so the correlator builds the exchanges exactly as live, and the SqliteRecorder (with the
 * record-time redactor: a capture from another tool may hold secrets) writes them.
 */
import { McptapError } from '../errors.js';
import type { ConnectionInfo, Transport } from '../model/events.js';
import type { Channel, FrameContext, FrameOrigin } from '../model/frame.js';
import { Pipeline } from '../pipeline/pipeline.js';
import type { Redactor } from '../redact/redactor.js';
import { SqliteRecorder, type SqliteRecorderOptions } from '../sinks/sqlite-recorder.js';
import type { Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { decodeHeader, decodeLine, parseTimeUs, type JsonlHeader, type JsonlHttp, type JsonlLine, type JsonlMessageLine } from './jsonl-format.js';

export interface ImportJsonlOptions {
  /** The file's lines, in order, without newlines. */
  lines: AsyncIterable<string>;
  /** Shown in errors as `file:line`. */
  file: string;
  /** Recording file to write (created when absent). */
  outPath: string;
  mcptapVersion: string;
  redactor?: Redactor;
  logger?: Logger;
}

export interface ImportJsonlResult {
  recordingId: number;
  /** Lines read, the header included. */
  lines: number;
  connections: number;
}

/** Lines pushed between waits for the recorder, so its queue never fills. */
const FLUSH_EVERY = 2000;
/** The live pipeline's tick period: cancelled requests are checked against their grace period this often. */
const TICK_US = 250_000;

export async function importJsonl(opts: ImportJsonlOptions): Promise<ImportJsonlResult> {
  const it = opts.lines[Symbol.asyncIterator]();
  const place = (line: number) => ({ file: opts.file, line });
  const first = await nextContentLine(it, 0);
  if (!first) throw new McptapError('MCPTAP_IMPORT_INVALID', `${opts.file}:1: (line): empty file (expected the header {"mcptap":"jsonl","version":1})`);
  const header = decodeHeader(first.text, place(first.line));
  // The recording starts when the header says, else at the first line: read it before the recording row is written.
  let next = await nextContentLine(it, first.line);
  let line = next ? decodeLine(next.text, place(next.line)) : undefined;
  const clock = new LatestClock(parseTimeUs(header.recording?.started) ?? (line ? parseTimeUs(line.t)! : 0));
  const pipeline = new Pipeline({ clock, tickMs: 0, logger: opts.logger ?? silentLogger });
  const recorder = new SqliteRecorder(recorderOptions(opts, header, clock));
  if (header.recording?.incomplete !== undefined) recorder.markIncomplete(header.recording.incomplete);
  pipeline.addSink(recorder);
  const feeder = new LineFeeder(pipeline, header, clock, opts.file);
  let lineNo = first.line;
  try {
    for (let fed = 1; next && line; fed++) {
      lineNo = next.line;
      feeder.feed(line);
      if (fed % FLUSH_EVERY === 0) await pipeline.flush();
      next = await nextContentLine(it, lineNo);
      line = next ? decodeLine(next.text, place(next.line)) : undefined;
    }
    feeder.closeAll();
    const endedUs = parseTimeUs(header.recording?.ended);
    if (endedUs !== undefined) clock.observe(endedUs);
  } finally {
    await pipeline.close();
  }
  const s = recorder.stats();
  const lost = s.droppedQueue + s.droppedWrite + s.errors;
  if (pipeline.errors > 0 || lost > 0)
    throw new McptapError('MCPTAP_IMPORT_INVALID', `${opts.file}: the recording could not take every line (${lost} events lost)`);
  return { recordingId: recorder.recordingId, lines: lineNo, connections: feeder.connections };
}

function recorderOptions(opts: ImportJsonlOptions, header: JsonlHeader, clock: LatestClock): SqliteRecorderOptions {
  const r = header.recording;
  return {
    path: opts.outPath,
    recording: {
      transport: r?.transport ?? 'stdio',
      target: r?.target ?? opts.file,
      startedUs: clock.nowUs(),
      mcptapVersion: opts.mcptapVersion,
      meta: { imported: { file: opts.file, ...(r?.mcptapVersion ? { mcptapVersion: r.mcptapVersion } : {}) } },
    },
    logger: opts.logger ?? silentLogger,
    clock,
    ...(opts.redactor ? { redactor: opts.redactor } : {}),
  };
}

async function nextContentLine(it: AsyncIterator<string>, after: number): Promise<{ text: string; line: number } | undefined> {
  let line = after;
  for (;;) {
    const r = await it.next();
    if (r.done) return undefined;
    line++;
    if (r.value.trim() !== '') return { text: r.value, line };
  }
}

/** "Now" is the latest time seen: the recording ends at its last line, not at the time of the import. */
class LatestClock implements Clock {
  constructor(private latestUs: number) {}
  nowUs(): number {
    return this.latestUs;
  }
  observe(us: number): void {
    if (us > this.latestUs) this.latestUs = us;
  }
}

/** Turns decoded lines into pipeline calls; opens connections a capture did not announce. */
class LineFeeder {
  private readonly open = new Map<string, Transport>();
  private lastTickUs: number | undefined;
  connections = 0;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly header: JsonlHeader,
    private readonly clock: LatestClock,
    private readonly file: string,
  ) {}

  feed(line: JsonlLine): void {
    const timeUs = parseTimeUs(line.t)!;
    this.clock.observe(timeUs);
    // Time passes as the input says, as the live timer would have seen it.
    if (this.lastTickUs === undefined || timeUs - this.lastTickUs >= TICK_US) {
      this.lastTickUs = timeUs;
      this.pipeline.tick(timeUs);
    }
    if (!('event' in line)) return this.message(line, timeUs);
    const p = this.pipeline;
    if (line.event === 'open') return this.openConnection(openInfo(line, this.header, this.file), timeUs);
    if (!this.open.has(line.conn)) this.openConnection(this.impliedOpen(line.conn, undefined), timeUs);
    if (line.event === 'stream-end') {
      const end = {
        timeUs,
        outcome: line.outcome,
        ...(line.errorClass ? { errorClass: line.errorClass } : {}),
        ...(line.status ? { httpStatus: line.status } : {}),
      };
      return p.endStream(line.conn, line.stream, end);
    }
    this.open.delete(line.conn);
    p.closeConnection(line.conn, {
      reason: line.reason ?? 'closed',
      timeUs,
      ...(line.exitCode !== undefined ? { exitCode: line.exitCode } : {}),
      ...(line.signal !== undefined ? { signal: line.signal } : {}),
      ...(line.errorClass !== undefined ? { errorClass: line.errorClass } : {}),
    });
  }

  /** Connections the capture never closed close at its last time. */
  closeAll(): void {
    for (const conn of [...this.open.keys()]) this.pipeline.closeConnection(conn, { reason: 'end of import', timeUs: this.clock.nowUs() });
    this.open.clear();
  }

  private openConnection(info: ConnectionInfo, timeUs: number): void {
    this.open.set(info.connectionId, info.transport);
    this.connections++;
    this.pipeline.openConnection(info, timeUs);
  }

  private impliedOpen(conn: string, line: JsonlMessageLine | undefined): ConnectionInfo {
    return {
      connectionId: conn,
      transport: line?.transport ?? this.header.recording?.transport ?? 'stdio',
      target: this.header.recording?.target ?? this.file,
      ...(line?.session !== undefined ? { sessionId: line.session } : {}),
    };
  }

  private message(line: JsonlMessageLine, timeUs: number): void {
    const conn = line.conn ?? '1';
    if (!this.open.has(conn)) this.openConnection(this.impliedOpen(conn, line), timeUs);
    const transport = line.transport ?? this.open.get(conn)!;
    if (line.stderr !== undefined) {
      const bytes = Buffer.from(`${line.stderr}\n`, 'utf8');
      return this.pipeline.pushChunk({ connectionId: conn, direction: line.dir, channel: 'stderr', bytes, timeUs });
    }
    const context = contextOf(line);
    const origin: FrameOrigin = {
      connectionId: conn,
      direction: line.dir,
      channel: line.channel ?? channelOf(transport, line.http),
      timeUs,
      ...(context ? { context } : {}),
    };
    const raw = Buffer.from(line.invalid ?? JSON.stringify(line.message), 'utf8');
    // Request headers are checked against the message, as the HTTP tap does.
    if (line.dir === 'c2s' && line.http?.headers) this.pipeline.pushRequest(origin, raw, line.http.headers);
    else this.pipeline.pushMessage(origin, raw);
  }
}

function openInfo(line: Extract<JsonlLine, { event: 'open' }>, header: JsonlHeader, file: string): ConnectionInfo {
  return {
    connectionId: line.conn,
    transport: line.transport ?? header.recording?.transport ?? 'stdio',
    target: line.target ?? header.recording?.target ?? file,
    ...(line.session !== undefined ? { sessionId: line.session } : {}),
    ...(line.pid !== undefined ? { pid: line.pid } : {}),
    ...(line.peer !== undefined ? { peer: line.peer } : {}),
  };
}

function channelOf(transport: Transport, http: JsonlHttp | undefined): Channel {
  if (transport === 'stdio') return 'stdio';
  return http?.sseId !== undefined || http?.sseEvent !== undefined ? 'sse' : 'http-body';
}

function contextOf(line: JsonlMessageLine): FrameContext | undefined {
  const h = line.http;
  const c: FrameContext = {};
  if (h?.stream !== undefined) c.streamId = h.stream;
  if (h?.status !== undefined) c.httpStatus = h.status;
  if (line.session !== undefined) c.sessionId = line.session;
  if (h?.sseId !== undefined) c.sseEventId = h.sseId;
  if (h?.sseEvent !== undefined) c.sseEventName = h.sseEvent;
  if (h?.protocolVersion !== undefined) c.headerProtocolVersion = h.protocolVersion;
  if (h?.responseHeaders !== undefined) c.responseHeadersUs = parseTimeUs(h.responseHeaders)!;
  if (h?.streamEnd !== undefined) c.streamEndUs = parseTimeUs(h.streamEnd)!;
  if (h?.headers !== undefined) c.headers = h.headers;
  return Object.keys(c).length > 0 ? c : undefined;
}
