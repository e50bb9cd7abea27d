/**
 * JSON as a collapsible tree (details/summary), every key and value a text node; values at the
 * JSON Pointers in `marks` are highlighted with the class `mark` (`diff`: a replay's differences,
 * `finding`: where check findings point).
 */
import { el } from './dom.js';

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function leaf(value: unknown, pointer: string, marks: ReadonlySet<string>, mark: string): HTMLElement {
  const cls = typeof value === 'string' ? 's' : typeof value === 'number' ? 'n' : 'l';
  const span = el('span', { class: `${cls}${marks.has(pointer) ? ` ${mark}` : ''}`, 'data-pointer': pointer }, JSON.stringify(value) ?? 'undefined');
  return span;
}

function node(key: string | null, value: unknown, pointer: string, marks: ReadonlySet<string>, depth: number, mark: string): HTMLElement {
  const label = key === null ? null : el('span', { class: 'k' }, `${JSON.stringify(key)}: `);
  if (value === null || typeof value !== 'object') return el('div', { class: 'leaf' }, label, leaf(value, pointer, marks, mark));
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value as Record<string, unknown>);
  const open = Array.isArray(value) ? '[' : '{';
  const summary = el(
    'summary',
    { 'data-pointer': pointer },
    label,
    `${open} ${entries.length} ${Array.isArray(value) ? 'items' : 'keys'} ${open === '[' ? ']' : '}'}`,
  );
  if (marks.has(pointer)) summary.classList.add(mark);
  const box = el('details', depth < 4 ? { open: '' } : {}, summary);
  for (const [k, v] of entries) box.append(node(Array.isArray(value) ? null : k, v, `${pointer}/${escapePointer(k)}`, marks, depth + 1, mark));
  return box;
}

/** A titled, copyable JSON tree. */
export function jsonBlock(title: string, value: unknown, marks: ReadonlySet<string> = new Set(), testId = '', mark = 'diff'): HTMLElement {
  const copy = el('button', { type: 'button', class: 'copy' }, 'copy');
  copy.addEventListener('click', () => {
    void navigator.clipboard?.writeText(JSON.stringify(value, null, 2)).then(
      () => (copy.textContent = 'copied'),
      () => (copy.textContent = 'copy failed'),
    );
  });
  return el('div', testId ? { 'data-testid': testId } : {}, el('h3', {}, title, copy), el('div', { class: 'json' }, node(null, value, '', marks, 0, mark)));
}
