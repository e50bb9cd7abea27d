/**
 * A server's surface as its clients' models see it: the tools, prompts, resources and resource
 * templates it listed, each with its definition as sent and its token cost. Built from a TapEvent
 * stream (every page of every `…/list` answer), written as a stable JSON snapshot to commit, and read
 * back as the baseline that drift is judged against.
 */
import { readFileSync } from 'node:fs';
import { McptapError } from '../errors.js';
import type { TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import { isSqliteFile } from '../store/recording-file-precheck.js';
import { RecordingStore } from '../store/recording-store.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { definitionTokens, TOKEN_ENCODING } from './token-cost.js';

export type SurfaceKind = 'tool' | 'prompt' | 'resource' | 'resourceTemplate';

export interface SurfaceItem {
  /** The item's identity: a tool's or prompt's name, a resource's URI, a template's URI template. */
  name: string;
  /** Tokens of the definition as sent ({@link TOKEN_ENCODING}). */
  tokens: number;
  definition: Readonly<Record<string, unknown>>;
}

/** Each list sorted by name; definitions with their keys sorted (snapshot) or as sent (extracted). */
export interface Surface {
  tools: SurfaceItem[];
  prompts: SurfaceItem[];
  resources: SurfaceItem[];
  resourceTemplates: SurfaceItem[];
}

export type SurfaceList = keyof Surface;

/** How each list method answers: the result member holding the page, and the member naming an item. */
export const SURFACE_LISTS: readonly { method: string; list: SurfaceList; kind: SurfaceKind; key: string }[] = [
  { method: 'tools/list', list: 'tools', kind: 'tool', key: 'name' },
  { method: 'prompts/list', list: 'prompts', kind: 'prompt', key: 'name' },
  { method: 'resources/list', list: 'resources', kind: 'resource', key: 'uri' },
  { method: 'resources/templates/list', list: 'resourceTemplates', kind: 'resourceTemplate', key: 'uriTemplate' },
];

export type SurfaceListSpec = (typeof SURFACE_LISTS)[number];

/** One answered page of a list method, as the event carried it. */
export interface ListPage {
  spec: SurfaceListSpec;
  exchange: Exchange;
  /** The response's `result` (an object). */
  result: Record<string, unknown>;
  /** `result[spec.list]` when it is an array; undefined when it is missing or not one. */
  items: unknown[] | undefined;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The list page an event completes, if it is the answer of a client's list request. */
export function listPageOf(event: TapEvent): ListPage | undefined {
  if (event.type !== 'exchange-completed' || event.exchange.direction !== 'c2s') return undefined;
  const spec = SURFACE_LISTS.find((s) => s.method === event.exchange.method);
  const response = event.exchange.response;
  if (!spec || !response || !('result' in response) || !isObject(response.result)) return undefined;
  const items = response.result[spec.list];
  return { spec, exchange: event.exchange, result: response.result, items: Array.isArray(items) ? items : undefined };
}

/** Connections whose listing is kept apart (replaceable); older ones are folded into the union. */
const OPEN_LISTINGS = 64;

type Definitions = Map<string, Record<string, unknown>>;

/**
 * Folds list pages into a surface. A request without a cursor starts a new listing of its
 * connection (or session); a cursor's page adds to it. The surface is the union of every
 * connection's latest listing, a name seen in several taking the definition listed last. Memory is
 * bounded: past {@link OPEN_LISTINGS} connections, the least recently listed one is folded into the
 * union for good (a live tap sees sessions without end).
 */
export class SurfaceBuilder {
  /** By scope (list and connection), least recently listed first. */
  private readonly listings = new Map<string, { list: SurfaceList; items: Definitions }>();
  private readonly folded = new Map<SurfaceList, Definitions>(SURFACE_LISTS.map((s) => [s.list, new Map()]));
  /** The lists answered at least once: a list never asked for says nothing of what the server has. */
  readonly listed = new Set<SurfaceList>();

  /** Adds the page the event completes (if any) and returns it. */
  add(event: TapEvent): ListPage | undefined {
    const page = listPageOf(event);
    if (!page?.items) return page;
    const { exchange, spec } = page;
    this.listed.add(spec.list);
    const scope = `${spec.list}\0${exchange.sessionId ?? exchange.connectionId}`;
    const params = 'params' in exchange.request ? exchange.request.params : undefined;
    const continued = isObject(params) && typeof params.cursor === 'string';
    const previous = this.listings.get(scope);
    const listing = previous && continued ? previous : { list: spec.list, items: new Map() };
    this.listings.delete(scope);
    this.listings.set(scope, listing);
    for (const item of page.items) {
      if (isObject(item) && typeof item[spec.key] === 'string') listing.items.set(item[spec.key] as string, item);
    }
    if (this.listings.size > OPEN_LISTINGS) {
      const [oldest, { list, items }] = this.listings.entries().next().value!;
      for (const [name, definition] of items) this.folded.get(list)!.set(name, definition);
      this.listings.delete(oldest);
    }
    return page;
  }

  build(): Surface {
    const merged = new Map<SurfaceList, Definitions>([...this.folded].map(([list, items]) => [list, new Map(items)]));
    for (const { list, items } of this.listings.values()) for (const [name, definition] of items) merged.get(list)!.set(name, definition);
    const items = (list: SurfaceList): SurfaceItem[] =>
      [...merged.get(list)!.entries()].sort(byName).map(([name, definition]) => ({ name, tokens: definitionTokens(definition), definition }));
    return { tools: items('tools'), prompts: items('prompts'), resources: items('resources'), resourceTemplates: items('resourceTemplates') };
  }
}

const byName = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** The surface a stream of events (a recording, a replay) shows. */
export function extractSurface(events: Iterable<TapEvent>): Surface {
  const builder = new SurfaceBuilder();
  for (const e of events) builder.add(e);
  return builder.build();
}

/** The surface of one recording in a recording file (only its completed exchanges are read). */
export function surfaceOfRecording(store: RecordingStore, recordingId: number): Surface {
  return extractSurface(store.events(recordingId, { types: new Set(['exchange-completed']) }));
}

/** Total tokens of a surface's tool definitions. */
export function toolTokens(surface: Surface): number {
  return surface.tools.reduce((sum, t) => sum + t.tokens, 0);
}

// ---- the snapshot file -----------------------------------------------------------------------

export const SNAPSHOT_FORMAT = 'mcptap-surface';
export const SNAPSHOT_VERSION = 1;

/** `v` with every object's keys sorted, so that equal surfaces are equal text. */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .filter((k) => v[k] !== undefined)
      .map((k) => [k, sortKeys(v[k])]),
  );
}

/** The snapshot's text: deterministic (sorted lists and keys), two-space indented, one trailing newline. */
export function snapshotText(surface: Surface): string {
  const list = (items: readonly SurfaceItem[]) => [...items].sort((a, b) => byName([a.name, a], [b.name, b])).map((i) => sortKeys(i));
  const doc = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    encoding: TOKEN_ENCODING,
    totals: { tools: surface.tools.length, toolTokens: toolTokens(surface) },
    tools: list(surface.tools),
    prompts: list(surface.prompts),
    resources: list(surface.resources),
    resourceTemplates: list(surface.resourceTemplates),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

/** Writes the snapshot atomically (readers see the old file or the new one). */
export async function writeSnapshot(file: string, surface: Surface): Promise<void> {
  try {
    await writeFileAtomic(file, snapshotText(surface));
  } catch (err) {
    throw new McptapError('MCPTAP_CHECK_SNAPSHOT_WRITE_FAILED', `cannot write the surface snapshot ${file}: ${(err as Error).message}`, { cause: err });
  }
}

const invalid = (source: string, where: string, why: string) => new McptapError('MCPTAP_CHECK_SNAPSHOT_INVALID', `${source}${where}: ${why}`);

/** Line and column (1-based) of a character offset. */
function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

/** Parses a snapshot's text; every problem is an McptapError naming `source` and the line or JSON Pointer. */
export function parseSnapshot(text: string, source: string): Surface {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message);
    throw invalid(source, at ? `:${lineCol(text, Number(at[1]))}` : '', `not JSON (${(err as Error).message})`);
  }
  if (!isObject(doc) || doc.format !== SNAPSHOT_FORMAT) {
    throw invalid(source, '', `not an mcptap surface snapshot (expected "format": "${SNAPSHOT_FORMAT}"; write one with mcptap check REC --snapshot FILE)`);
  }
  if (doc.version !== SNAPSHOT_VERSION) {
    throw invalid(source, ': /version', `snapshot format version ${JSON.stringify(doc.version)} is not one this mcptap reads (${SNAPSHOT_VERSION})`);
  }
  if (doc.encoding !== TOKEN_ENCODING) {
    throw invalid(source, ': /encoding', `token counts in ${JSON.stringify(doc.encoding)} cannot be compared with ${TOKEN_ENCODING}`);
  }
  const surface = {} as Surface;
  for (const { list } of SURFACE_LISTS) {
    const items = doc[list] ?? [];
    if (!Array.isArray(items)) throw invalid(source, `: /${list}`, 'expected an array');
    surface[list] = items.map((item: unknown, i) => {
      const at = `: /${list}/${i}`;
      if (!isObject(item)) throw invalid(source, at, 'expected an object');
      if (typeof item.name !== 'string' || item.name === '') throw invalid(source, `${at}/name`, 'expected a non-empty string');
      if (!Number.isSafeInteger(item.tokens) || (item.tokens as number) < 0) throw invalid(source, `${at}/tokens`, 'expected a non-negative integer');
      if (!isObject(item.definition)) throw invalid(source, `${at}/definition`, 'expected an object');
      return { name: item.name, tokens: item.tokens as number, definition: item.definition };
    });
    const names = surface[list].map((i) => i.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) throw invalid(source, `: /${list}`, `${JSON.stringify(dup)} is listed twice`);
  }
  return surface;
}

/** Reads a snapshot file written by {@link writeSnapshot}. */
export function readSnapshot(file: string): Surface {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new McptapError('MCPTAP_CHECK_SNAPSHOT_INVALID', `cannot read the surface snapshot ${file}: ${(err as Error).message}`, { cause: err });
  }
  return parseSnapshot(text, file);
}

/**
 * `--baseline FILE`: a surface snapshot, or a recording file (its latest recording, or `recording`)
 * whose list answers give the surface.
 */
export function loadBaseline(file: string, opts: { recording?: number } = {}): Surface {
  if (!isSqliteFile(file)) return readSnapshot(file);
  const store = RecordingStore.open(file, { create: false });
  try {
    const id = opts.recording ?? store.latestRecordingId();
    if (id === undefined || !store.getRecording(id)) {
      const which = id === undefined ? 'recordings' : `recording ${id}`;
      throw new McptapError('MCPTAP_NO_RECORDING', `${file} has no ${which} to take the baseline surface from`);
    }
    return surfaceOfRecording(store, id);
  } finally {
    store.close();
  }
}
