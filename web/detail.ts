/**
 * One exchange: facts, timings, its SSE events, progress and cancellation on a timeline, request
 * and response JSON, HTTP headers, frames, anomalies, trace id (a Jaeger link when configured) and,
 * with a replay, the recorded and replayed answers side by side with the differing pointers marked.
 */
import { el, fmtMs, sizedCanvas } from './dom.js';
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

export function renderDetail(d: Detail, hooks: DetailHooks): HTMLElement[] {
  const x = d.exchange;
  const out: (HTMLElement | null)[] = [];
  out.push(el('h2', {}, `#${x.row} ${x.method}${x.target !== undefined ? ` ${x.target}` : ''} — ${x.outcome}`));
  const buttons = el('div', {});
  const wfConn = el('button', { type: 'button', 'data-testid': 'waterfall-connection' }, 'Waterfall of its connection');
  wfConn.addEventListener('click', () => hooks.waterfall('connection', x.connection));
  buttons.append(wfConn);
  if (x.session !== undefined) {
    const wfSess = el('button', { type: 'button', 'data-testid': 'waterfall-session' }, 'Waterfall of its session');
    wfSess.addEventListener('click', () => hooks.waterfall('session', x.session!));
    buttons.append(' ', wfSess);
  }
  out.push(buttons);
  out.push(facts('Exchange', Object.entries(x)));
  if (d.traceId) {
    const trace = el('div', { 'data-testid': 'trace' }, el('h3', {}, 'Trace'), el('code', {}, d.traceId));
    if (hooks.jaeger) {
      trace.append(' ', el('a', { href: `${hooks.jaeger}/trace/${d.traceId}`, target: '_blank', rel: 'noopener noreferrer' }, 'open in Jaeger'));
    }
    out.push(trace);
  }
  out.push(
    facts(
      'Timings',
      Object.entries(d.timings).map(([k, v]) => [k, typeof v === 'number' && k.endsWith('Ms') ? fmtMs(v) : v]),
    ),
  );
  out.push(timeline(d));
  if (d.cancel) {
    const cancel = facts(
      'Cancellation',
      Object.entries(d.cancel).map(([k, v]) => [k, k === 'atMs' ? fmtMs(v as number) : v]),
    );
    cancel?.setAttribute('data-testid', 'cancel');
    out.push(cancel);
  }
  if (d.replay) {
    const marks = new Set(d.replay.differences.map((r) => r.path).filter((p): p is string => p !== undefined));
    out.push(
      el(
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
      ),
    );
  }
  out.push(jsonBlock('Request', d.request, new Set(), 'request'));
  out.push(d.response !== undefined ? jsonBlock('Response', d.response, new Set(), 'response') : el('p', {}, 'No response recorded.'));
  const headed = d.frames.filter((f) => f.headers);
  for (const f of headed) out.push(facts(`HTTP headers, frame ${f.seq} (${f.direction})`, Object.entries(f.headers!)));
  out.push(
    el(
      'div',
      {},
      el('h3', {}, `Frames (${d.frames.length}${d.framesMore ? `, ${d.framesMore} more` : ''})`),
      el(
        'table',
        {},
        el('tr', {}, ...['seq', 'at', 'direction', 'channel', 'kind', 'HTTP', 'SSE id'].map((h) => el('th', {}, h))),
        ...d.frames.map((f) =>
          el(
            'tr',
            {},
            el('td', {}, f.seq),
            el('td', {}, fmtMs(f.atMs)),
            el('td', {}, f.direction),
            el('td', {}, f.channel),
            el('td', {}, f.kind),
            el('td', {}, f.httpStatus ?? ''),
            el('td', {}, f.sseEventId ?? ''),
          ),
        ),
      ),
    ),
  );
  if (d.anomalies.length)
    out.push(
      el('div', {}, el('h3', {}, 'Anomalies'), el('ul', {}, ...d.anomalies.map((a) => el('li', { class: 'bad' }, `${fmtMs(a.atMs)} ${a.kind}: ${a.detail}`)))),
    );
  return out.filter((n): n is HTMLElement => n !== null);
}
