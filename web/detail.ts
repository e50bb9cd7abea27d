/**
 * One exchange: facts, timings, its SSE events, progress and cancellation on a timeline, request
 * and response JSON, HTTP headers, frames, anomalies, trace id (a Jaeger link when configured) and,
 * with a replay, the recorded and replayed answers side by side with the differing pointers marked;
 * with a check result, its findings about the exchange, their pointers marked in the request or response.
 */
import { el, fmtMs, sizedCanvas } from './dom.js';
import { findingItem, findingMarks, type Finding } from './findings.js';
import { jsonBlock } from './json-view.js';

export interface Detail {
  exchange: Record<string, unknown> & { row: number; method: string; target?: string; outcome: string; connection: string; session?: string };
  timings: Record<string, number | string>;
  sseEventsMs?: number[];
  progress?: { atMs: number; progress: number; total?: number; message?: string }[];
  cancel?: { atMs: number; by: string; reason?: string; responseAfterCancel?: boolean };
  request: unknown;
  response?: unknown;
  frames: {
    seq: number;
    atMs: number;
    direction: string;
    channel: string;
    kind: string;
    httpStatus?: number;
    sseEventId?: string;
    headers?: Record<string, string>;
  }[];
  framesMore?: number;
  anomalies: { kind: string; atMs: number; detail: string }[];
  traceId?: string;
  replay?: {
    recordedOutcome?: string;
    replayedOutcome?: string;
    recordedLatencyUs?: number | null;
    replayedLatencyUs?: number | null;
    notSent?: boolean;
    differences: { kind: string; path?: string; message: string }[];
    answer: unknown;
  };
  /** With --check: the findings about this exchange (absent: its recording was not checked). */
  findings?: Finding[];
}

function facts(title: string, entries: [string, unknown][]): HTMLElement | null {
  const shown = entries.filter(([, v]) => v !== undefined && v !== null && v !== '');
  if (shown.length === 0) return null;
  return el(
    'div',
    {},
    el('h3', {}, title),
    el('table', {}, ...shown.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, typeof v === 'string' ? v : JSON.stringify(v))))),
  );
}

/** Request at 0, then headers, events, progress, cancellation and the end, on one line. */
function timeline(d: Detail): HTMLElement {
  const canvas = el('canvas', { class: 'timeline', 'data-chart': 'timeline' });
  const marks: { at: number; colour: string; label: string }[] = [{ at: 0, colour: '#0969da', label: 'request' }];
  const t = d.timings;
  if (typeof t.responseHeadersMs === 'number') marks.push({ at: t.responseHeadersMs, colour: '#8250df', label: 'headers' });
  for (const at of d.sseEventsMs ?? []) marks.push({ at, colour: '#1f2328', label: 'SSE' });
  for (const p of d.progress ?? []) marks.push({ at: p.atMs, colour: '#fb8f44', label: `progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}` });
  if (d.cancel) marks.push({ at: d.cancel.atMs, colour: '#cf222e', label: `cancel (${d.cancel.by})` });
  if (typeof t.latencyMs === 'number') marks.push({ at: t.latencyMs, colour: '#1a7f37', label: 'response' });
  if (typeof t.streamEndMs === 'number') marks.push({ at: t.streamEndMs, colour: '#57606a', label: 'stream end' });
  const box = el('div', {}, el('h3', {}, `Timeline (${marks.length - 1} events after the request)`), canvas);
  // Drawn once the canvas is in the page and has a width.
  requestAnimationFrame(() => {
    const width = Math.max(400, canvas.clientWidth);
    const ctx = sizedCanvas(canvas, width, 60);
    const end = Math.max(1, ...marks.map((m) => m.at));
    const x = (ms: number) => 10 + ((width - 20) * ms) / end;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, width, 60);
    ctx.strokeStyle = '#d0d7de';
    ctx.beginPath();
    ctx.moveTo(10, 30);
    ctx.lineTo(width - 10, 30);
    ctx.stroke();
    ctx.font = '10px system-ui, sans-serif';
    for (const m of marks) {
      ctx.fillStyle = m.colour;
      ctx.fillRect(x(m.at) - 1.5, 18, 3, 24);
    }
    ctx.fillStyle = '#57606a';
    ctx.textAlign = 'left';
    ctx.fillText('0', 10, 54);
    ctx.textAlign = 'right';
    ctx.fillText(fmtMs(end), width - 10, 54);
    canvas.dataset.drawn = String(marks.length);
  });
  const list = el('ul', { 'data-testid': 'events' }, ...marks.slice(1).map((m) => el('li', {}, `${fmtMs(m.at)} ${m.label}`)));
  return el('div', {}, box, list);
}

export interface DetailHooks {
  jaeger?: string;
  waterfall(by: 'connection' | 'session', id: string): void;
}

/** Buttons that draw the exchange's connection or session as a waterfall. */
function waterfallButtons(x: Detail['exchange'], hooks: DetailHooks): HTMLElement {
  const box = el('div', {});
  const scopes: ['connection' | 'session', string | undefined][] = [
    ['connection', x.connection],
    ['session', x.session],
  ];
  for (const [by, id] of scopes) {
    if (id === undefined) continue;
    const b = el('button', { type: 'button', 'data-testid': `waterfall-${by}` }, `Waterfall of its ${by}`);
    b.addEventListener('click', () => hooks.waterfall(by, id));
    box.append(b, ' ');
  }
  return box;
}

function traceBlock(traceId: string | undefined, jaeger: string | undefined): HTMLElement | null {
  if (!traceId) return null;
  const trace = el('div', { 'data-testid': 'trace' }, el('h3', {}, 'Trace'), el('code', {}, traceId));
  // A link only: the page never fetches from Jaeger, the user's click opens it.
  if (jaeger) trace.append(' ', el('a', { href: `${jaeger}/trace/${traceId}`, target: '_blank', rel: 'noopener noreferrer' }, 'open in Jaeger'));
  return trace;
}

/** The recorded and replayed answers side by side, the differing pointers marked in both. */
function replayBlock(d: Detail): HTMLElement | null {
  if (!d.replay) return null;
  const marks = new Set(d.replay.differences.map((r) => r.path).filter((p): p is string => p !== undefined));
  return el(
    'div',
    { 'data-testid': 'replay' },
    el('h3', {}, `Replay: recorded ${d.replay.recordedOutcome ?? ''}, replayed ${d.replay.replayedOutcome ?? ''}`),
    el('ul', {}, ...d.replay.differences.map((r) => el('li', { class: 'bad' }, r.path ? `${r.path}: ${r.message}` : r.message))),
    el(
      'div',
      { class: 'side' },
      jsonBlock('Recorded answer', d.response ?? null, marks, 'recorded'),
      jsonBlock('Replayed answer', d.replay.answer, marks, 'replayed'),
    ),
  );
}

/** The check's findings about the exchange; "no findings" when it was checked and none is about it. */
function findingsBlock(d: Detail): HTMLElement | null {
  if (!d.findings) return null;
  const list = d.findings.length ? el('ul', {}, ...d.findings.map((f) => findingItem(f, undefined, true))) : el('p', {}, 'no findings');
  return el('div', { 'data-testid': 'findings' }, el('h3', {}, `Check findings (${d.findings.length})`), list);
}

function framesBlock(d: Detail): HTMLElement {
  const head = el('tr', {}, ...['seq', 'at', 'direction', 'channel', 'kind', 'HTTP', 'SSE id'].map((h) => el('th', {}, h)));
  const cells = (f: Detail['frames'][number]) => [f.seq, fmtMs(f.atMs), f.direction, f.channel, f.kind, f.httpStatus ?? '', f.sseEventId ?? ''];
  return el(
    'div',
    {},
    el('h3', {}, `Frames (${d.frames.length}${d.framesMore ? `, ${d.framesMore} more` : ''})`),
    el('table', {}, head, ...d.frames.map((f) => el('tr', {}, ...cells(f).map((c) => el('td', {}, c))))),
  );
}

/** Times in ms as people read them, other facts as they are. */
function withMs(entries: [string, unknown][]): [string, unknown][] {
  return entries.map(([k, v]) => [k, typeof v === 'number' && k.endsWith('Ms') ? fmtMs(v) : v]);
}

export function renderDetail(d: Detail, hooks: DetailHooks): HTMLElement[] {
  const x = d.exchange;
  const cancel = d.cancel ? facts('Cancellation', withMs(Object.entries(d.cancel))) : null;
  cancel?.setAttribute('data-testid', 'cancel');
  const out: (HTMLElement | null)[] = [
    el('h2', {}, `#${x.row} ${x.method}${x.target !== undefined ? ` ${x.target}` : ''} — ${x.outcome}`),
    waterfallButtons(x, hooks),
    facts('Exchange', Object.entries(x)),
    traceBlock(d.traceId, hooks.jaeger),
    facts('Timings', withMs(Object.entries(d.timings))),
    timeline(d),
    cancel,
    replayBlock(d),
    findingsBlock(d),
    jsonBlock('Request', d.request, findingMarks(d.findings ?? [], 'client', d.request), 'request', 'finding'),
    d.response !== undefined
      ? jsonBlock('Response', d.response, findingMarks(d.findings ?? [], 'server', d.response), 'response', 'finding')
      : el('p', {}, 'No response recorded.'),
    ...d.frames.filter((f) => f.headers).map((f) => facts(`HTTP headers, frame ${f.seq} (${f.direction})`, Object.entries(f.headers!))),
    framesBlock(d),
    d.anomalies.length
      ? el(
          'div',
          { 'data-testid': 'anomalies' },
          el('h3', {}, 'Anomalies'),
          el('ul', {}, ...d.anomalies.map((a) => el('li', { class: 'bad' }, `${fmtMs(a.atMs)} ${a.kind}: ${a.detail}`))),
        )
      : null,
  ];
  return out.filter((n): n is HTMLElement => n !== null);
}
