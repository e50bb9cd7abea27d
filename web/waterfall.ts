/**
 * A connection or session drawn as DevTools draws requests: one bar per exchange from its start to
 * its end, coloured by method or tool, its SSE events and progress as ticks; long-lived streams as
 * lanes on top, from their first to their last server frame, their notifications as purple ticks,
 * and listed under the canvas. Labels are drawn with fillText (no markup).
 */
import { byId, colourOf, el, fmtMs, sizedCanvas } from './dom.js';

export interface WaterfallData {
  exchanges: { row: number; method: string; target?: string; outcome: string; startMs: number; endMs?: number; sseMs: number[]; progressMs: number[] }[];
  streams: { connectionId: string; streamId: string; kind: string; firstMs: number; lastMs: number; notifications: number; notificationMs: number[] }[];
  note?: string;
}

const LANE = 18;
const LABEL = 220;
const TOP = 24;
/** A long-lived stream's notification ticks: a hue no method or tool is drawn in. */
export const STREAM_TICK = '#6639ba';
/** Lanes drawn at most (the canvas must stay a sane size). */
const MAX_LANES = 400;

/** Draws `data`; returns the row each lane shows, top to bottom, for clicks. */
export function drawWaterfall(data: WaterfallData, caption: string): number[] {
  const canvas = byId<HTMLCanvasElement>('waterfall');
  const exchanges = data.exchanges.slice(0, MAX_LANES);
  const lanes = data.streams.length + exchanges.length;
  const width = Math.max(600, canvas.parentElement!.clientWidth - 4);
  const height = TOP + Math.max(1, lanes) * LANE + 8;
  const ctx = sizedCanvas(canvas, width, height);
  const end = Math.max(1, ...exchanges.map((e) => e.endMs ?? e.startMs), ...data.streams.map((s) => s.lastMs));
  const x = (ms: number) => LABEL + ((width - LABEL - 12) * ms) / end;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  // Time axis: five ticks with grid lines.
  for (let i = 0; i <= 5; i++) {
    const t = (end * i) / 5;
    ctx.strokeStyle = '#eaeef2';
    ctx.beginPath();
    ctx.moveTo(x(t), TOP - 4);
    ctx.lineTo(x(t), height);
    ctx.stroke();
    ctx.fillStyle = '#57606a';
    ctx.textAlign = i === 5 ? 'right' : 'center';
    ctx.fillText(fmtMs(t), x(t), 10);
  }
  ctx.textAlign = 'left';
  let y = TOP;
  for (const s of data.streams) {
    ctx.fillStyle = '#24292f';
    ctx.fillText(`${s.kind} stream (${s.notifications} notif.)`.slice(0, 34), 4, y + LANE / 2);
    ctx.fillStyle = '#8c959f';
    ctx.fillRect(x(s.firstMs), y + 5, Math.max(2, x(s.lastMs) - x(s.firstMs)), LANE - 10);
    ctx.fillStyle = STREAM_TICK;
    for (const t of s.notificationMs) ctx.fillRect(x(t) - 1, y + 1, 2, LANE - 2);
    y += LANE;
  }
  for (const e of exchanges) {
    const name = e.target ? `${e.method} ${e.target}` : e.method;
    ctx.fillStyle = e.outcome === 'ok' ? '#24292f' : '#cf222e';
    ctx.fillText(name.length > 34 ? `${name.slice(0, 33)}…` : name, 4, y + LANE / 2);
    const x0 = x(e.startMs);
    const x1 = e.endMs === undefined ? width - 12 : x(e.endMs);
    ctx.fillStyle = colourOf(e.target ?? e.method);
    ctx.fillRect(x0, y + 3, Math.max(2, x1 - x0), LANE - 6);
    if (e.outcome !== 'ok') {
      ctx.strokeStyle = '#cf222e';
      ctx.lineWidth = 2;
      ctx.strokeRect(x0, y + 3, Math.max(2, x1 - x0), LANE - 6);
      ctx.lineWidth = 1;
    }
    ctx.fillStyle = '#1f2328';
    for (const t of e.sseMs) ctx.fillRect(x(t) - 1, y + 1, 2, LANE - 2);
    ctx.fillStyle = '#fb8f44';
    for (const t of e.progressMs) ctx.fillRect(x(t) - 1.5, y + 6, 3, LANE - 12);
    y += LANE;
  }
  canvas.dataset.drawn = String(exchanges.length);
  canvas.dataset.streams = String(data.streams.length);
  const n = data.streams.length;
  const streams = n > 0 ? `, ${n} long-lived stream${n === 1 ? '' : 's'} (grey lanes on top, purple ticks their notifications)` : '';
  byId('waterfall-caption').textContent = `${caption}: ${data.exchanges.length} exchanges${data.note ? ` (${data.note})` : ''}${
    data.exchanges.length > MAX_LANES ? `, the first ${MAX_LANES} drawn` : ''
  }${streams}. Bars coloured by method or tool; black ticks SSE events, orange ticks progress; red outline a failure. Click a bar to open it.`;
  byId('waterfall-streams').replaceChildren(...data.streams.map(streamItem));
  return [...data.streams.map(() => 0), ...exchanges.map((e) => e.row)];
}

/** A long-lived stream in words, its notifications' times listed: what its lane shows. */
export function streamText(s: WaterfallData['streams'][number]): string {
  const times = s.notificationMs.map(fmtMs).join(', ');
  const cut = s.notificationMs.length < s.notifications ? ` (the first ${s.notificationMs.length} marked)` : '';
  return `${s.kind} stream ${s.streamId} of ${s.connectionId}: ${s.notifications} notifications from ${fmtMs(s.firstMs)} to ${fmtMs(s.lastMs)}${
    times ? `, at ${times}` : ''
  }${cut}`;
}

function streamItem(s: WaterfallData['streams'][number]): HTMLElement {
  return el('li', { 'data-testid': 'waterfall-stream', 'data-notifications': String(s.notifications) }, streamText(s));
}

/** The row of the lane at a click's y (0: a stream lane or outside). */
export function laneAt(rows: readonly number[], offsetY: number): number {
  const i = laneIndex(offsetY);
  return i >= 0 && i < rows.length ? rows[i]! : 0;
}

/** The stream whose lane is at a pointer's y, if any: hovering it shows its notifications. */
export function streamAt(data: WaterfallData, offsetY: number): WaterfallData['streams'][number] | undefined {
  const i = laneIndex(offsetY);
  return i >= 0 ? data.streams[i] : undefined;
}

const laneIndex = (offsetY: number) => Math.floor((offsetY - TOP) / LANE);
