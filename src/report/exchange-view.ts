/**
 * `mcptap show`: a list of exchanges (one line each), one exchange with its frames and anomalies,
 * or a recording's anomalies. Pure: data in, string or JSON-ready object out.
 */
import type { StoredAnomaly, StoredExchange, StoredFrame, StoredLongStream } from '../store/types.js';
import { lineSafe, formatId, formatOffset, formatUs, table, truncate } from './format.js';
import { indent } from './recording-list.js';
import { counted } from '../util/plural.js';

export interface DetailOptions {
  /** Show payloads whole instead of truncating them. */
  full?: boolean;
  /** Characters of a payload shown when not `full` (default 4000). */
  maxPayloadChars?: number;
}

export function listedOutcome(e: Pick<StoredExchange, 'state' | 'outcome'>): string {
  return e.state === 'started' ? 'pending' : e.outcome;
}

/** Short flags for one line: what the outcome alone does not say. */
export function exchangeFlags(e: StoredExchange): string[] {
  const f: string[] = [];
  if (e.direction === 's2c') f.push('s2c');
  if (e.isError) f.push('isError');
  if (e.cancel) f.push(`cancelled-by-${e.cancel.by}`);
  if (e.responseAfterCancel) f.push('response-after-cancel');
  if (e.transport?.httpStatus !== undefined && e.transport.httpStatus >= 400) f.push(`http-${e.transport.httpStatus}`);
  if (e.transport?.errorClass) f.push(e.transport.errorClass);
  if (e.operationKey) f.push('retry');
  return f;
}

export function renderExchangeList(exchanges: readonly StoredExchange[]): string {
  if (exchanges.length === 0) return 'no exchanges match\n';
  const rows = exchanges.map((e) => [
    `#${e.rowid}`,
    cell(formatId(e.id)),
    cell(e.method || '-'),
    cell(e.target ?? '-'),
    listedOutcome(e),
    e.errorCode === undefined ? '-' : String(e.errorCode),
    formatUs(e.latencyUs),
    String(e.progress.length),
    exchangeFlags(e).join(',') || '-',
  ]);
  return `${table(['ROW', 'ID', 'METHOD', 'TARGET', 'OUTCOME', 'CODE', 'LATENCY', 'PROG', 'FLAGS'], rows, [5, 6, 7])}\n`;
}

/** Longest text of a listed id, method or target: one long value must not widen every row (`--exchange #ROW` shows it whole). */
const MAX_CELL = 40;

/** Escaped before it is measured: the table's widths are those of what the terminal shows. */
function cell(raw: string): string {
  const text = lineSafe(raw);
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

function header(e: StoredExchange): string[] {
  const lines = [
    `exchange #${e.rowid}  key ${lineSafe(e.key)}`,
    `  id ${lineSafe(formatId(e.id))} (${e.idType})  method ${lineSafe(e.method)}${e.target ? `  target ${lineSafe(e.target)}` : ''}`,
    `  connection ${lineSafe(e.connectionId)}  direction ${e.direction}  era ${e.era}` +
      `${e.protocolVersion ? `  protocol ${lineSafe(e.protocolVersion)}` : ''}${e.sessionId ? `  session ${lineSafe(e.sessionId)}` : ''}`,
    `  outcome ${listedOutcome(e)}${e.isError ? ' (isError)' : ''}  latency ${formatUs(e.latencyUs)}  progress ${e.progress.length}`,
  ];
  if (e.errorCode !== undefined || e.errorMessage !== undefined) lines.push(`  error ${e.errorCode ?? ''} ${lineSafe(e.errorMessage ?? '')}`.trimEnd());
  if (e.cancel) {
    lines.push(
      `  cancelled by ${e.cancel.by} at ${formatOffset(e.cancel.timeUs, e.startUs)}${e.cancel.reason ? ` (${lineSafe(e.cancel.reason)})` : ''}` +
        `${e.responseAfterCancel ? '  response arrived after cancel' : ''}`,
    );
  }
  const t = e.transport;
  if (t) {
    const parts = [
      t.httpStatus !== undefined ? `http ${t.httpStatus}` : '',
      t.errorClass ? `transport error ${t.errorClass}` : '',
      t.firstEventUs !== undefined ? `first SSE event ${formatOffset(t.firstEventUs, e.startUs)}` : '',
      t.eventTimesUs ? `${t.eventTimesUs.length} SSE events` : '',
    ].filter(Boolean);
    if (parts.length) lines.push(`  ${parts.join('  ')}`);
  }
  if (e.operationKey) lines.push(`  operation ${lineSafe(e.operationKey)}`);
  return lines;
}

/** Pretty JSON when the bytes parse, else the text as it was. */
function payload(raw: Buffer): string {
  const text = raw.toString('utf8');
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function frameSummary(f: StoredFrame): string {
  if (f.kind === 'message') {
    const m = f.message as { method?: string };
    return `${f.messageKind}${m.method ? ` ${lineSafe(m.method)}` : ''}${f.batch ? ` (batch ${f.batch.index + 1}/${f.batch.size})` : ''}`;
  }
  return f.kind === 'invalid' ? `invalid (${lineSafe(f.reason)})` : 'log';
}

export function renderFrame(f: StoredFrame, originUs: number, opts: DetailOptions = {}): string {
  const ctx = f.context;
  const extra = [
    ctx?.httpStatus !== undefined ? `http ${ctx.httpStatus}` : '',
    ctx?.sseEventId ? `sse id ${lineSafe(ctx.sseEventId)}` : '',
    ctx?.streamId ? `stream ${lineSafe(ctx.streamId)}` : '',
  ]
    .filter(Boolean)
    .join('  ');
  const head = `${formatOffset(f.timeUs, originUs)}  ${f.direction}  ${f.channel}  seq ${f.seq}  ${frameSummary(f)}${extra ? `  ${extra}` : ''}`;
  const body = opts.full ? payload(f.raw) : truncate(payload(f.raw), opts.maxPayloadChars ?? 4000, '; --full shows all');
  return `${head}\n${indent(body, '    ')}`;
}

export function renderAnomalies(anomalies: readonly StoredAnomaly[], originUs?: number): string {
  if (anomalies.length === 0) return 'no anomalies\n';
  const origin = originUs ?? anomalies[0]!.timeUs;
  const rows = anomalies.map((a) => [
    formatOffset(a.timeUs, origin),
    a.kind,
    lineSafe(a.connectionId),
    a.direction ?? '-',
    a.frameSeq === undefined ? '-' : String(a.frameSeq),
    a.detail,
  ]);
  return `${table(['AT', 'KIND', 'CONNECTION', 'DIR', 'SEQ', 'DETAIL'], rows)}\n`;
}

/** `show --streams`: one line per long-lived stream, then the count and notifications per kind. */
export function renderLongStreams(streams: readonly StoredLongStream[], originUs?: number): string {
  if (streams.length === 0) return 'no long-lived streams (standalone GET or subscriptions/listen) with a recorded frame\n';
  const origin = originUs ?? streams[0]!.firstUs;
  const rows = streams.map((s) => [
    formatOffset(s.firstUs, origin),
    formatOffset(s.lastUs, origin),
    s.kind,
    lineSafe(s.connectionId),
    lineSafe(s.streamId),
    String(s.frames),
    String(s.notifications),
  ]);
  const totals = (['get', 'listen'] as const)
    .map((kind) => {
      const of = streams.filter((s) => s.kind === kind);
      return of.length ? `${counted(of.length, `${kind} stream`)}, ${of.reduce((n, s) => n + s.notifications, 0)} notifications` : '';
    })
    .filter(Boolean);
  return `${table(['FIRST', 'LAST', 'KIND', 'CONNECTION', 'STREAM', 'FRAMES', 'NOTIFICATIONS'], rows)}\n${totals.join('; ')}\n`;
}

export function renderExchangeDetail(e: StoredExchange, frames: readonly StoredFrame[], anomalies: readonly StoredAnomaly[], opts: DetailOptions = {}): string {
  const out = [...header(e), '', `frames (${frames.length}):`];
  for (const f of frames) out.push(indent(renderFrame(f, e.startUs, opts), '  '));
  if (anomalies.length > 0) out.push('', `anomalies (${anomalies.length}):`, indent(renderAnomalies(anomalies, e.startUs).trimEnd(), '  '));
  return `${out.join('\n')}\n`;
}

/** JSON form of a frame: raw bytes as UTF-8 text (recordings hold JSON-RPC text). */
export function frameJson(f: StoredFrame): unknown {
  return { ...f, raw: f.raw.toString('utf8') };
}

/** JSON form of an exchange: its outcome as listed (`pending` while still in flight), as the text output and `--outcome` say it. */
export function exchangeJson(e: StoredExchange): unknown {
  return { ...e, outcome: listedOutcome(e) };
}

export function exchangeDetailJson(e: StoredExchange, frames: readonly StoredFrame[], anomalies: readonly StoredAnomaly[]): unknown {
  return { exchange: exchangeJson(e), frames: frames.map(frameJson), anomalies };
}
