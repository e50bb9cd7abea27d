/** DOM and fetch helpers. Data only ever becomes text nodes (textContent), never markup. */

type Child = Node | string | number | null | undefined | false;

/** An element with attributes (as attributes, never `innerHTML`) and children (strings become text). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'number' ? String(c) : c);
  return e;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

/** GET /api/NAME with the given query (empty values left out); rejects with the server's error text. */
export async function api<T>(name: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const res = await fetch(`/api/${name}?${q.toString()}`, { credentials: 'same-origin', cache: 'no-store' });
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

export function setStatus(text: string): void {
  byId('status').textContent = text;
}

/** Milliseconds as people read them. */
export function fmtMs(ms: number | undefined | null): string {
  if (ms === undefined || ms === null) return '';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

/** Eight distinct hues: a colour per method or tool, stable across draws. */
export const PALETTE = ['#0969da', '#1a7f37', '#8250df', '#bf8700', '#0598bc', '#bc4c00', '#d1247c', '#57606a'];

export function colourOf(name: string): string {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return PALETTE[h % PALETTE.length]!;
}

/** A canvas sized for the screen's pixel ratio; returns its 2D context in CSS pixels. */
export function sizedCanvas(c: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const ratio = window.devicePixelRatio || 1;
  c.width = Math.round(width * ratio);
  c.height = Math.round(height * ratio);
  c.style.height = `${height}px`;
  const ctx = c.getContext('2d')!;
  ctx.scale(ratio, ratio);
  return ctx;
}
