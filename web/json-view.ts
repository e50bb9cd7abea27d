/**
 * JSON as a collapsible tree (details/summary), every key and value a text node; values at the
 * JSON Pointers in `marks` are highlighted (a replay's differences).
 */
import { el } from './dom.js';

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function leaf(value: unknown, pointer: string, marks: ReadonlySet<string>): HTMLElement {
  const cls = typeof value === 'string' ? 's' : typeof value === 'number' ? 'n' : 'l';
  const span = el('span', { class: `${cls}${marks.has(pointer) ? ' diff' : ''}`, 'data-pointer': pointer }, JSON.stringify(value) ?? 'undefined');
  return span;
}

function node(key: string | null, value: unknown, pointer: string, marks: ReadonlySet<string>, depth: number): HTMLElement {
  const label = key === null ? null : el('span', { class: 'k' }, `${JSON.stringify(key)}: `);
  if (value === null || typeof value !== 'object') return el('div', { class: 'leaf' }, label, leaf(value, pointer, marks));
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value as Record<string, unknown>);
  const open = Array.isArray(value) ? '[' : '{';
  const summary = el('summary', {}, label, `${open} ${entries.length} ${Array.isArray(value) ? 'items' : 'keys'} ${open === '[' ? ']' : '}'}`);
  if (marks.has(pointer)) summary.classList.add('diff');
  const box = el('details', depth < 4 ? { open: '' } : {}, summary);
  for (const [k, v] of entries) box.append(node(Array.isArray(value) ? null : k, v, `${pointer}/${escapePointer(k)}`, marks, depth + 1));
  return box;
}

/** A titled, copyable JSON tree. */
export function jsonBlock(title: string, value: unknown, marks: ReadonlySet<string> = new Set(), testId = ''): HTMLElement {
  const copy = el('button', { type: 'button', class: 'copy' }, 'copy');
  copy.addEventListener('click', () => {
    void navigator.clipboard?.writeText(JSON.stringify(value, null, 2)).then(
      () => (copy.textContent = 'copied'),
      () => (copy.textContent = 'copy failed'),
    );
  });
  return el('div', testId ? { 'data-testid': testId } : {}, el('h3', {}, title, copy), el('div', { class: 'json' }, node(null, value, '', marks, 0)));
}
