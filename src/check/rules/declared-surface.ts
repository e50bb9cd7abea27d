/**
 * What a server declared to one client: the tools, prompts, resources and resource templates of its
 * latest list responses (every page), per connection (or HTTP session). Contract rules judge calls
 * against it, and only when it is evidence: a complete list not made stale by a `list_changed`.
 */

/** Where a declared item came from: the list response and the item's index in it. */
export interface Declared<T> {
  item: T;
  exchangeKey: string;
  /** Pointer to the item in its list response, e.g. `/result/tools/3`. */
  pointer: string;
}

export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** The list methods, the member of their result holding the items, and each item's key. */
export const LISTS: Record<string, { kind: ListKind; key: string }> = {
  'tools/list': { kind: 'tools', key: 'name' },
  'prompts/list': { kind: 'prompts', key: 'name' },
  'resources/list': { kind: 'resources', key: 'uri' },
  'resources/templates/list': { kind: 'resourceTemplates', key: 'uriTemplate' },
};

/** Which lists a `notifications/.../list_changed` makes stale. */
export const LIST_CHANGED: Record<string, ListKind[]> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/prompts/list_changed': ['prompts'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
};

type Item = Record<string, unknown>;

/** One list, paged: the pages read so far, and the last complete list to fall back on meanwhile. */
export class Listing {
  private current = new Map<string, Declared<Item>>();
  private previous: Map<string, Declared<Item>> | undefined;
  /** The pages so far began with a first page (a later page alone, its first before the recording, is never complete). */
  private firstSeen = false;
  private complete = false;
  private stale = false;

  /** A list response: `cursor` is the request's (absent: a first page), `more` whether nextCursor followed. */
  page(items: unknown[], cursor: unknown, more: boolean, key: string, where: { exchangeKey: string; member: string }): void {
    if (cursor === undefined) {
      if (this.complete) this.previous = this.current;
      this.current = new Map();
      this.firstSeen = true;
      this.stale = false;
    }
    items.forEach((item, i) => {
      if (item === null || typeof item !== 'object') return;
      const k = (item as Item)[key];
      if (typeof k === 'string') this.current.set(k, { item: item as Item, exchangeKey: where.exchangeKey, pointer: `/result/${where.member}/${i}` });
    });
    this.complete = !more && this.firstSeen;
  }

  markStale(): void {
    this.stale = true;
  }

  /** Whether any first page of this list was seen. */
  get seen(): boolean {
    return this.firstSeen;
  }

  /** Whether absence from this list is evidence (a complete, fresh list). */
  get authoritative(): boolean {
    return this.complete && !this.stale;
  }

  /** The declaration of `key`: from the pages so far, else from the last complete list. */
  find(key: string): Declared<Item> | undefined {
    if (this.stale) return undefined;
    return this.current.get(key) ?? (this.complete ? undefined : this.previous?.get(key));
  }

  values(): IterableIterator<Declared<Item>> {
    return this.current.values();
  }
}

/** The declared surface of one connection or session, plus URIs its results linked to. */
export class DeclaredSurface {
  readonly lists: Record<ListKind, Listing> = {
    tools: new Listing(),
    prompts: new Listing(),
    resources: new Listing(),
    resourceTemplates: new Listing(),
  };
  /** URIs of `resource_link` and embedded resources in results: clients may read those, listed or not. */
  readonly linkedUris = new Set<string>();

  noteLinks(result: unknown): void {
    const blocks = collectBlocks(result);
    for (const b of blocks) {
      const uri = b.type === 'resource_link' ? b.uri : b.type === 'resource' ? (b.resource as Item | undefined)?.uri : undefined;
      if (typeof uri === 'string' && this.linkedUris.size < 10_000) this.linkedUris.add(uri);
    }
  }

  /** Whether a URI is one the server offered: a listed resource, a linked one, or a template's match. */
  offersUri(uri: string): boolean {
    if (this.lists.resources.find(uri) || this.linkedUris.has(uri)) return true;
    for (const t of this.lists.resourceTemplates.values()) {
      const template = t.item.uriTemplate;
      if (typeof template === 'string' && templateMatches(template, uri)) return true;
    }
    return false;
  }
}

/** Content blocks of a tool result (`content`) or prompt result (`messages[].content`). */
function collectBlocks(result: unknown): Item[] {
  if (result === null || typeof result !== 'object') return [];
  const r = result as Item;
  const out: Item[] = [];
  const add = (c: unknown) => {
    if (Array.isArray(c)) for (const b of c) add(b);
    else if (c !== null && typeof c === 'object') out.push(c as Item);
  };
  add(r.content);
  if (Array.isArray(r.messages)) for (const m of r.messages) add((m as Item | null)?.content);
  return out;
}

const compiledTemplates = new Map<string, RegExp | null>();

/**
 * Whether a URI matches an RFC 6570 template, read tolerantly: a level-1 `{var}` matches any text
 * without `/`; reserved and fragment expansion (`{+var}`, `{#var}`) match anything; path, label and
 * query operators match their optional segments. A template that cannot be read matches nothing.
 */
export function templateMatches(template: string, uri: string): boolean {
  let re = compiledTemplates.get(template);
  if (re === undefined) {
    re = templateRegExp(template);
    if (compiledTemplates.size >= 1_000) compiledTemplates.clear();
    compiledTemplates.set(template, re);
  }
  return re !== null && re.test(uri);
}

function templateRegExp(template: string): RegExp | null {
  let pattern = '^';
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf('{');
    if (open < 0) {
      pattern += escape(rest);
      break;
    }
    const close = rest.indexOf('}', open);
    if (close < 0) return null;
    pattern += escape(rest.slice(0, open)) + expression(rest.slice(open + 1, close));
    rest = rest.slice(close + 1);
  }
  try {
    return new RegExp(pattern + '$', 's');
  } catch {
    return null;
  }
}

function expression(expr: string): string {
  switch (expr[0]) {
    case '+':
    case '#':
      return '.*';
    case '/':
      return '(?:/[^?#]*)?';
    case '.':
    case ';':
      return `(?:\\${expr[0]}[^/?#]*)*`;
    case '?':
    case '&':
      return '(?:[?&][^#]*)?';
    default:
      return '[^/?#]*';
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
