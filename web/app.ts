/**
 * The explorer's page script: the recordings of each file, the chosen recording's exchanges
 * (filters, virtual scrolling, live tail polled every 400 ms), one exchange in detail and a
 * connection or session as a waterfall. Everything comes from /api/ on this origin.
 */
import { api, byId, el, fmtMs, setStatus } from './dom.js';
import { renderDetail, type Detail } from './detail.js';
import { renderFindings, type Finding } from './findings.js';
import { ExchangeTable, type ExchangeRow } from './table.js';
import { drawWaterfall, laneAt, streamAt, streamText, type WaterfallData } from './waterfall.js';

interface Recording {
  file: string;
  recording: number;
  transport: string;
  target: string;
  startedAt: string;
  durationMs: number | null;
  exchanges: number;
  outcomes: Record<string, number>;
  anomalies: number;
  state?: string;
  incomplete?: string;
  dropped?: number;
}

interface Listing {
  files: string[];
  recordings: Recording[];
  jaeger?: string;
  replay?: { file: string; target: string; counts: Record<string, number> };
  check?: { file: string; recordings: number[] };
}

const TAIL_MS = 400;
const LIST_MS = 3000;
const OUTCOMES = ['', 'ok', 'tool_error', 'jsonrpc_error', 'transport_error', 'cancelled', 'unanswered', 'orphan_response', 'pending'];
const TEXT_FILTERS: [string, string, string][] = [
  ['method', 'method', 'tools/call'],
  ['tool', 'tool', 'echo'],
  ['connection', 'connection', ''],
  ['session', 'session', ''],
  ['minMs', 'min ms', ''],
  ['maxMs', 'max ms', ''],
  ['text', 'text', 'in params or result'],
];

let listing: Listing = { files: [], recordings: [] };
/** The list has been read once. */
let listed = false;
let chosen: { file: string; recording: number } | undefined;
let waterfallRows: number[] = [];
let waterfallData: WaterfallData | undefined;

function filterForm(onChange: () => void): void {
  const form = byId<HTMLFormElement>('filters');
  for (const [name, label, hint] of TEXT_FILTERS)
    form.append(el('label', {}, label, el('input', { name, placeholder: hint, class: name.endsWith('Ms') ? 'short' : '', autocomplete: 'off' })));
  form.append(el('label', {}, 'outcome', el('select', { name: 'outcome' }, ...OUTCOMES.map((o) => el('option', { value: o }, o || 'any')))));
  form.append(
    el(
      'label',
      {},
      'sort',
      el('select', { name: 'sort' }, el('option', { value: 'time' }, 'time'), el('option', { value: 'duration' }, 'duration (slowest first)')),
    ),
  );
  let timer: number | undefined;
  const changed = () => {
    clearTimeout(timer);
    timer = window.setTimeout(onChange, 250);
  };
  form.addEventListener('input', changed);
  form.addEventListener('submit', (e) => e.preventDefault());
}

function query(): Record<string, string | undefined> {
  const form = new FormData(byId<HTMLFormElement>('filters'));
  const q: Record<string, string | undefined> = { file: chosen?.file, recording: chosen ? String(chosen.recording) : undefined };
  for (const [k, v] of form.entries()) if (typeof v === 'string' && v.trim() !== '') q[k] = v.trim();
  return q;
}

function outcomesText(o: Record<string, number>): string {
  return Object.entries(o)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

function renderRecordings(table: ExchangeTable): void {
  const list = byId('recording-list');
  const head = el(
    'tr',
    {},
    ...['file', '#', 'transport', 'target', 'started', 'duration', 'exchanges', 'outcomes', 'anomalies', 'state'].map((h) => el('th', {}, h)),
  );
  const rows = listing.recordings.map((r) => {
    const tr = el(
      'tr',
      { class: `pick${chosen?.file === r.file && chosen.recording === r.recording ? ' chosen' : ''}`, 'data-recording': `${r.file}#${r.recording}` },
      el('td', {}, r.file),
      el('td', {}, r.recording),
      el('td', {}, r.transport),
      el('td', {}, r.target),
      el('td', {}, r.startedAt),
      el('td', {}, r.durationMs === null ? '' : fmtMs(r.durationMs)),
      el('td', {}, r.exchanges),
      el('td', {}, outcomesText(r.outcomes)),
      el('td', {}, r.anomalies),
      el(
        'td',
        {},
        r.incomplete ? el('span', { class: 'incomplete' }, `INCOMPLETE: ${r.incomplete}`) : null,
        r.dropped ? el('span', { class: 'bad' }, ` ${r.dropped} dropped`) : null,
        r.state ?? '',
      ),
    );
    tr.addEventListener('click', () => choose(table, { file: r.file, recording: r.recording }));
    return tr;
  });
  list.replaceChildren(head, ...rows);
  if (!listed) list.append(el('tr', {}, el('td', {}, 'reading the recordings…')));
  else if (listing.recordings.length === 0) list.append(el('tr', {}, el('td', {}, `no recordings yet in ${listing.files.join(', ')}; waiting`)));
}

function choose(table: ExchangeTable, which: { file: string; recording: number }): void {
  chosen = which;
  renderRecordings(table);
  byId('explorer').hidden = false;
  byId('detail').hidden = true;
  byId('waterfall-box').hidden = true;
  void table.reset();
  void showFindings(which).catch((e: Error) => setStatus(`error: ${e.message}`));
}

/** With --check: the chosen recording's findings, each about an exchange opening its detail. */
async function showFindings(which: { file: string; recording: number }): Promise<void> {
  const box = byId('findings');
  const got = await api<{ withCheck: boolean; checked: boolean; findings: Finding[] }>('findings', which);
  if (!got.withCheck || chosen !== which) return;
  box.replaceChildren(
    ...renderFindings(
      got.checked,
      got.findings,
      (row) =>
        void openExchange(row)
          .then(() => byId('detail').scrollIntoView({ block: 'start' }))
          .catch((e: Error) => setStatus(`error: ${e.message}`)),
    ),
  );
  box.hidden = false;
  box.dataset.recording = `${which.file}#${which.recording}`;
}

async function openExchange(row: number): Promise<void> {
  const d = await api<Detail>('exchange', { file: chosen?.file, recording: chosen?.recording, row });
  const box = byId('detail');
  box.replaceChildren(
    ...renderDetail(d, {
      ...(listing.jaeger ? { jaeger: listing.jaeger } : {}),
      waterfall: (by, id) => void openWaterfall(by, id),
    }),
  );
  box.hidden = false;
  box.dataset.row = String(row);
}

async function openWaterfall(by: 'connection' | 'session', id: string): Promise<void> {
  const data = await api<WaterfallData>('waterfall', { file: chosen?.file, recording: chosen?.recording, [by]: id });
  const box = byId('waterfall-box');
  box.hidden = false;
  waterfallRows = drawWaterfall(data, `${by} ${id}`);
  waterfallData = data;
  box.scrollIntoView({ block: 'nearest' });
}

async function start(): Promise<void> {
  const table = new ExchangeTable(query, (row: ExchangeRow) => void openExchange(row.row).catch((e: Error) => setStatus(`error: ${e.message}`)));
  filterForm(() => void table.reset());
  byId<HTMLCanvasElement>('waterfall').addEventListener('click', (ev) => {
    const row = laneAt(waterfallRows, ev.offsetY);
    if (row > 0) void openExchange(row);
  });
  // Hovering a long-lived stream's lane shows it and its notifications' times as the canvas's tooltip.
  byId<HTMLCanvasElement>('waterfall').addEventListener('mousemove', (ev) => {
    const s = waterfallData && streamAt(waterfallData, ev.offsetY);
    (ev.target as HTMLCanvasElement).title = s ? streamText(s) : '';
  });
  const refresh = async () => {
    listing = await api<Listing>('recordings');
    listed = true;
    renderRecordings(table);
    const replay = listing.replay ? ` · replay of ${listing.replay.file} against ${listing.replay.target}` : '';
    const check = listing.check ? ` · check of ${listing.check.file}` : '';
    setStatus(`${listing.files.join(', ')}${replay}${check}`);
    const latest = listing.recordings.at(-1);
    if (!chosen && latest) choose(table, { file: latest.file, recording: latest.recording });
  };
  // The latest recording of the first file that has one, from a query that reads no exchange: its first
  // page shows while the list (counts over every exchange: a second or more on a big file) is read.
  const { files } = await api<{ files: { file: string; latest: number | null }[] }>('latest');
  const first = files.find((f) => f.latest !== null);
  if (first) choose(table, { file: first.file, recording: first.latest! });
  await refresh();
  let busy = false;
  // The live tail: new rows after the last, while the table is sorted by time and fully loaded;
  // until a recording exists, the list is read again.
  window.setInterval(() => {
    if (busy) return;
    busy = true;
    (chosen ? table.tail() : refresh())
      .catch((e: Error) => setStatus(`error: ${e.message}`))
      .finally(() => {
        busy = false;
      });
  }, TAIL_MS);
  // A recording begun in a file after the page opened (another run of a tap into it): seen from the
  // latest numbers, a query that reads no exchange.
  const grown = async () => {
    const { files: now } = await api<{ files: { file: string; latest: number | null }[] }>('latest');
    return now.some((f) => f.latest !== null && !listing.recordings.some((r) => r.file === f.file && r.recording === f.latest));
  };
  // The list's counts while the chosen recording is still being written (a GROUP BY over the file: not every tail poll).
  window.setInterval(() => {
    const live = listing.recordings.find((r) => r.file === chosen?.file && r.recording === chosen.recording)?.state !== undefined;
    void (async () => {
      if (live || (await grown())) await refresh();
    })().catch((e: Error) => setStatus(`error: ${e.message}`));
  }, LIST_MS);
  document.body.dataset.ready = '1';
}

document.addEventListener('DOMContentLoaded', () => void start().catch((e: Error) => setStatus(`error: ${e.message}`)));
