/**
 * Check findings (`mcptap ui --check`): a recording's findings grouped by rule, each about an exchange a
 * link to its detail; in an exchange's detail, its findings, and the pointers to mark in its JSON.
 */
import { el } from './dom.js';

export interface Finding {
  ruleId: string;
  severity: string;
  message: string;
  where: {
    row?: number;
    exchangeKey?: string;
    connectionId?: string;
    sessionId?: string;
    jsonRpcId?: string | number | null;
    method?: string;
    tool?: string;
    side?: 'client' | 'server';
    frameSeq?: number;
    subject?: { kind: string; name: string };
  };
  pointer?: string;
  expected?: string;
  found?: string;
  schemaRule?: string;
  specVersion?: string;
}

/** Where a finding is, as people read it: exchange row, method, tool, side, frame, subject. */
function place(w: Finding['where']): string {
  return [
    w.row !== undefined ? `#${w.row}` : '',
    w.method ?? '',
    w.tool ?? '',
    w.side ? `from the ${w.side}` : '',
    w.frameSeq !== undefined ? `frame ${w.frameSeq}` : '',
    w.subject ? `${w.subject.kind} ${w.subject.name}` : '',
    w.connectionId ? `connection ${w.connectionId}` : '',
  ]
    .filter((s) => s !== '')
    .join(' · ');
}

/** One finding: severity (and rule, out of a rule's group), message, place, pointer, expected vs found; `open` makes it a link to its exchange. */
export function findingItem(f: Finding, open?: (row: number) => void, withRule = false): HTMLElement {
  const li = el(
    'li',
    { class: `finding sev-${f.severity}`, 'data-rule': f.ruleId, ...(f.where.row !== undefined ? { 'data-row': String(f.where.row) } : {}) },
    el('span', { class: 'sev' }, f.severity),
    withRule ? ` ${f.ruleId}:` : '',
    ' ',
    f.message,
    el('div', { class: 'where' }, place(f.where), f.pointer ? el('code', {}, ` ${f.pointer}`) : null),
    f.expected !== undefined || f.found !== undefined ? el('div', { class: 'where' }, `expected ${f.expected ?? '?'}, found ${f.found ?? '?'}`) : null,
  );
  if (open && f.where.row !== undefined) {
    const row = f.where.row;
    li.classList.add('link');
    li.tabIndex = 0;
    li.addEventListener('click', () => open(row));
    li.addEventListener('keydown', (ev) => (ev.key === 'Enter' ? open(row) : undefined));
  }
  return li;
}

/** A recording's findings grouped by rule (in the order first found), or what there is to say instead. */
export function renderFindings(checked: boolean, findings: Finding[], open: (row: number) => void): HTMLElement[] {
  if (!checked) return [el('h2', {}, 'Check findings'), el('p', {}, 'The --check result holds no check of this recording.')];
  if (findings.length === 0) return [el('h2', {}, 'Check findings'), el('p', { 'data-testid': 'no-findings' }, 'no findings')];
  const byRule = new Map<string, Finding[]>();
  for (const f of findings) byRule.set(f.ruleId, [...(byRule.get(f.ruleId) ?? []), f]);
  return [
    el('h2', {}, `Check findings (${findings.length})`),
    ...[...byRule].map(([rule, fs]) =>
      el('div', { class: 'rule' }, el('h3', {}, `${rule} (${fs.length})`), el('ul', {}, ...fs.map((f) => findingItem(f, open)))),
    ),
  ];
}

/** True when `pointer` names a value in `doc` (RFC 6901). */
function resolves(doc: unknown, pointer: string): boolean {
  let at = doc;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof at !== 'object' || at === null || !Object.prototype.hasOwnProperty.call(at, key)) return false;
    at = (at as Record<string, unknown>)[key];
  }
  return true;
}

/**
 * The pointers to mark in one message of the exchange: those of findings about a message from this
 * side (any side when unsaid) that point into it; a pointer to a missing member marks its nearest
 * present parent (below the root), where the member was expected.
 */
export function findingMarks(findings: readonly Finding[], side: 'client' | 'server', doc: unknown): Set<string> {
  const marks = new Set<string>();
  for (const f of findings) {
    if (!f.pointer?.startsWith('/') || (f.where.side !== undefined && f.where.side !== side)) continue;
    let p = f.pointer;
    while (p !== '' && !resolves(doc, p)) p = p.slice(0, p.lastIndexOf('/'));
    if (p !== '') marks.add(p);
  }
  return marks;
}
