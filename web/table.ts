/**
 * The exchange table with virtual scrolling: only the rows in view (plus a margin) are in the DOM;
 * pages are fetched from /api/exchanges as the user scrolls near the end of what is loaded, and the
 * live tail appends the rows recorded since the last one (polled by the app).
 */
import { api, byId, el, fmtMs } from './dom.js';

export interface ExchangeRow {
  row: number;
  id: unknown;
  method: string;
  target?: string;
  outcome: string;
  latencyMs?: number;
  atMs: number;
  connection: string;
  session?: string;
  sseEvents?: number;
  progress?: number;
  cancelledBy?: string;
  replay?: string;
}

interface Page {
  exchanges: ExchangeRow[];
  more: number;
  cursor?: string;
  note?: string;
  /** The recording's last row when the page was read: no row up to it is missing from what matched. */
  tailFrom: number;
}

export const ROW_HEIGHT = 22;
const PAGE = 200;
const MARGIN = 10;
export const COLUMNS = ['row', 'at', 'method', 'tool / target', 'outcome', 'latency', 'SSE / prog.', 'session / connection'];

export class ExchangeTable {
  private rows: ExchangeRow[] = [];
  private cursor: string | undefined;
  /** Where the tail reads on from: the last row looked at (so a filter matching nothing does not rescan the recording). */
  private tailAfter = 0;
  private more = 0;
  private loading = false;
  /** Bumped on every reset: answers to an older query are dropped. */
  private generation = 0;
  private chosen: number | undefined;
  /** The query of the last reset: pages and the tail keep to it while the form is being edited. */
  private q: Record<string, string | undefined> = {};
  private readonly box = byId('table');
  private readonly space = byId('table-space');
  private readonly foot = byId('table-foot');

  constructor(
    private query: () => Record<string, string | undefined>,
    private readonly onPick: (row: ExchangeRow) => void,
  ) {
    byId('table-head').replaceChildren(...COLUMNS.map((c) => el('span', {}, c)));
    this.box.addEventListener('scroll', () => this.render());
    this.space.addEventListener('click', (ev) => {
      const target = (ev.target as HTMLElement).closest<HTMLElement>('[data-row]');
      const row = this.rows.find((r) => String(r.row) === target?.dataset.row);
      if (row) {
        this.chosen = row.row;
        this.render();
        this.onPick(row);
      }
    });
  }

  /** Drops what is loaded and fetches the first page of the current query. */
  async reset(): Promise<void> {
    this.generation++;
    this.q = this.query();
    this.rows = [];
    this.cursor = undefined;
    this.tailAfter = 0;
    this.more = 0;
    this.loading = false;
    this.box.scrollTop = 0;
    await this.loadPage(true);
  }

  /** Sorted by time and fully loaded: where new rows of a live recording land. */
  get tailing(): boolean {
    return this.q.sort !== 'duration' && this.cursor === undefined && !this.loading;
  }

  /** Appends what was recorded after the last row (same filters), and refreshes rows that were pending. */
  async tail(): Promise<void> {
    if (!this.tailing) return;
    const gen = this.generation;
    const after = Math.max(this.tailAfter, this.rows.at(-1)?.row ?? 0);
    const page = await api<Page>('exchanges', { ...this.q, cursor: after > 0 ? String(after) : undefined, limit: PAGE });
    const pending = this.rows.filter((r) => r.outcome === 'pending').slice(-100);
    const updated = pending.length
      ? (
          await api<{ exchanges: ExchangeRow[] }>('pending', {
            file: this.q.file,
            recording: this.q.recording,
            rows: pending.map((r) => r.row).join(','),
          })
        ).exchanges
      : [];
    if (gen !== this.generation) return;
    for (const u of updated) {
      const i = this.rows.findIndex((r) => r.row === u.row);
      if (i !== -1) this.rows[i] = u;
    }
    const last = this.rows.at(-1)?.row ?? 0;
    this.rows.push(...page.exchanges.filter((x) => x.row > last));
    if (page.cursor !== undefined) {
      this.cursor = page.cursor;
      this.more = page.more;
    } else this.tailAfter = Math.max(after, page.tailFrom);
    if (page.exchanges.length || updated.length) this.render();
  }

  private async loadPage(first = false): Promise<void> {
    if (this.loading || (!first && this.cursor === undefined)) return;
    this.loading = true;
    const gen = this.generation;
    try {
      const page = await api<Page>('exchanges', { ...this.q, cursor: this.cursor, limit: PAGE });
      if (gen !== this.generation) return;
      this.rows.push(...page.exchanges);
      this.cursor = page.cursor;
      this.more = page.more;
      // The last page: everything up to tailFrom was looked at.
      if (page.cursor === undefined) this.tailAfter = page.tailFrom;
      this.foot.textContent = page.note && page.cursor === undefined && page.more > 0 ? page.note : '';
    } catch (err) {
      if (gen === this.generation) this.foot.textContent = `error: ${(err as Error).message}`;
    } finally {
      if (gen === this.generation) this.loading = false;
    }
    this.render();
  }

  /** Draws the rows in view; asks for the next page when the view nears the end of what is loaded. */
  render(): void {
    this.space.style.height = `${this.rows.length * ROW_HEIGHT}px`;
    const top = this.box.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - MARGIN);
    const last = Math.min(this.rows.length, Math.ceil((top + this.box.clientHeight) / ROW_HEIGHT) + MARGIN);
    const nodes: HTMLElement[] = [];
    for (let i = first; i < last; i++) nodes.push(this.rowNode(this.rows[i]!, i));
    this.space.replaceChildren(...nodes);
    this.box.dataset.loaded = String(this.rows.length);
    this.box.dataset.rendered = String(nodes.length);
    const moreText = this.cursor !== undefined ? `, ${this.more}${this.more >= 10000 ? '+' : ''} more as you scroll` : '';
    if (!this.foot.textContent?.startsWith('error')) this.foot.textContent = `${this.rows.length} exchanges loaded${moreText}`;
    if (last >= this.rows.length - MARGIN) void this.loadPage();
  }

  private rowNode(x: ExchangeRow, i: number): HTMLElement {
    const stream = [x.sseEvents ? `${x.sseEvents} ev` : '', x.progress ? `${x.progress} p` : ''].filter(Boolean).join(' ');
    const where = x.session ?? x.connection;
    const node = el(
      'div',
      { class: `row${x.row === this.chosen ? ' chosen' : ''}`, 'data-row': String(x.row) },
      el('span', {}, `#${x.row}`),
      el('span', {}, fmtMs(x.atMs)),
      el('span', {}, x.method),
      el('span', { class: 'target' }, x.target ?? ''),
      el('span', { class: `o-${x.outcome}` }, x.outcome + (x.cancelledBy ? ` (by ${x.cancelledBy})` : '')),
      el('span', {}, fmtMs(x.latencyMs)),
      el('span', {}, stream),
      el('span', {}, x.replay ? el('span', { class: `r-${x.replay}` }, `replay ${x.replay} · `) : null, where),
    );
    // Through the CSSOM: the CSP allows no style attribute.
    node.style.top = `${i * ROW_HEIGHT}px`;
    return node;
  }
}
