/**
 * The pieces under the tool-contract rules: schema compilation and located violations, RFC 6570
 * template matching, paged lists, and a checker that never throws on odd events.
 */
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/check/finding.js';
import { Listing, templateMatches } from '../../src/check/rules/declared-surface.js';
import { SchemaValidators, violations } from '../../src/check/rules/schema-validators.js';
import { toolContracts } from '../../src/check/rules/tool-contracts.js';
import type { TapEvent } from '../../src/model/events.js';

describe('schema validators', () => {
  const validators = new SchemaValidators(2);
  const compile = (schema: unknown) => {
    const c = validators.compile(schema);
    if (!c.ok) throw new Error(c.reason);
    return c;
  };

  it('locates each failing place once, a failing anyOf as itself', () => {
    const { validate } = compile({
      type: 'object',
      properties: { a: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, b: { type: 'string', format: 'date-time' }, c: { minimum: 0 } },
      required: ['d'],
    });
    expect(violations(validate, { a: 1.5, b: 'yesterday', c: -1 })).toEqual([
      { pointer: '/d', schemaRule: '#/required', keyword: 'required', expected: 'required member "d"', found: 'absent' },
      { pointer: '/a', schemaRule: '#/properties/a/anyOf', keyword: 'anyOf', expected: 'match a schema in anyOf', found: '1.5' },
      { pointer: '/b', schemaRule: '#/properties/b/format', keyword: 'format', expected: 'a date-time string (format)', found: '"yesterday"' },
      { pointer: '/c', schemaRule: '#/properties/c/minimum', keyword: 'minimum', expected: '>= 0', found: '-1' },
    ]);
    expect(violations(validate, { d: 1, a: 'x' })).toEqual([]);
  });

  it('says a format in words, a format without words by its name', () => {
    const { validate } = compile({ type: 'object', properties: { u: { type: 'string', format: 'uri' }, n: { type: 'integer', format: 'int32' } } });
    expect(violations(validate, { u: 'not a uri', n: 2 ** 40 }).map((v) => v.expected)).toEqual(['a URI (format)', 'a "int32" value (format)']);
  });

  it('escapes member names in pointers', () => {
    const { validate } = compile({ type: 'object', additionalProperties: false });
    expect(violations(validate, { 'a/b~c': 1 })[0]!.pointer).toBe('/a~1b~0c');
  });

  it('says why a schema is unusable instead of throwing', () => {
    expect(validators.compile(42)).toEqual({ ok: false, reason: 'a schema is an object or a boolean, not number' });
    expect(validators.compile({ type: 'object', properties: { x: { $ref: 'https://example.com/x.json' } } })).toMatchObject({ ok: false });
    expect(validators.compile(true)).toMatchObject({ ok: true });
  });

  it('falls back to draft-07 for draft-07-style schemas without $schema', () => {
    const c = compile({ type: 'array', items: [{ type: 'string' }] });
    expect(c.dialect).toBe('draft-07');
    expect(compile({ $schema: 'https://json-schema.org/draft/2020-12/schema', prefixItems: [{ type: 'string' }] }).dialect).toBe('2020-12');
  });
});

describe('URI templates (tolerant RFC 6570)', () => {
  it.each([
    ['notes://{id}', 'notes://n1', true],
    ['notes://{id}', 'notes://a/b', false],
    ['file:///{+path}', 'file:///a/b/c.txt', true],
    ['api://items{?page,size}', 'api://items?page=2', true],
    ['api://items{?page,size}', 'api://items', true],
    ['x://{a}/y{/rest}', 'x://1/y/more', true],
    ['x://{a}.{b}', 'x://1.2', true],
    ['x://{broken', 'x://{broken', false],
    ['x://(literal)', 'x://(literal)', true],
  ])('%s ~ %s: %s', (template, uri, matches) => expect(templateMatches(template, uri)).toBe(matches));
});

describe('paged lists', () => {
  const where = { exchangeKey: 'k', member: 'tools' };
  it('a list is complete after its last page, stale after list_changed', () => {
    const l = new Listing();
    l.page([{ name: 'a' }], undefined, true, 'name', where);
    expect(l.authoritative).toBe(false);
    l.page([{ name: 'b' }], '1', false, 'name', where);
    expect([l.authoritative, l.find('a')?.pointer, l.find('b')?.pointer]).toEqual([true, '/result/tools/0', '/result/tools/0']);
    l.markStale();
    expect([l.authoritative, l.find('a')]).toEqual([false, undefined]);
  });

  it('a later page without its first is never complete; the last complete list serves while paging', () => {
    const l = new Listing();
    l.page([{ name: 'b' }], '1', false, 'name', where);
    expect(l.authoritative).toBe(false);
    l.page([{ name: 'a' }], undefined, false, 'name', where);
    l.page([{ name: 'c' }], undefined, true, 'name', where);
    expect([l.find('a')?.item, l.find('c')?.item, l.authoritative]).toEqual([{ name: 'a' }, { name: 'c' }, false]);
  });
});

describe('the checker on odd events', () => {
  it('never throws, and says when it skipped an event', () => {
    const checker = toolContracts(new Map());
    const found: Finding[] = [];
    const broken = {
      type: 'exchange-completed',
      exchange: {
        direction: 'c2s',
        method: 'tools/list',
        key: 'k',
        connectionId: 'c',
        request: {},
        response: { result: { tools: [null, 7, { name: 'x', inputSchema: 'no' }] } },
      },
    };
    expect(() => checker.onEvent(broken as unknown as TapEvent, (f) => found.push(f))).not.toThrow();
    expect(() => checker.onEvent({ type: 'exchange-completed' } as unknown as TapEvent, (f) => found.push(f))).not.toThrow();
    expect(found.map((f) => f.ruleId)).toEqual(['contract/schema-unusable', 'contract/check-failed']);
    checker.finish(() => undefined);
  });
});

/** A completed client request as the correlator reports it (only what the checker reads). */
function exchange(seq: number, sessionId: string, method: string, params: object, result: object): TapEvent {
  const connectionId = `http:${sessionId}`;
  const request = { jsonrpc: '2.0', id: seq, method, params };
  const ex = {
    key: `${connectionId}/c2s/${seq}`,
    connectionId,
    sessionId,
    direction: 'c2s',
    id: seq,
    method,
    request,
    startUs: seq,
    outcome: 'ok',
    isError: false,
  };
  return { type: 'exchange-completed', exchange: { ...ex, response: { jsonrpc: '2.0', id: seq, result }, endUs: seq + 1 } } as unknown as TapEvent;
}

describe('declarations per HTTP session', () => {
  it("one session's tools/list judges its own calls, not another session's", () => {
    const checker = toolContracts(new Map());
    const found: Finding[] = [];
    const ok = { content: [{ type: 'text', text: 'ok' }] };
    const events = [
      exchange(1, 'A', 'tools/list', {}, { tools: [{ name: 'a', inputSchema: { type: 'object' } }] }),
      exchange(2, 'B', 'tools/call', { name: 'b' }, ok), // B listed nothing: no evidence
      exchange(3, 'A', 'tools/call', { name: 'b' }, ok), // A's list lacks b, and the server ran it
      exchange(4, 'A', 'tools/call', { name: 'a' }, ok),
    ];
    for (const e of events) checker.onEvent(e, (f) => found.push(f));
    expect(found.map((f) => [f.ruleId, f.where.sessionId, f.where.jsonRpcId])).toEqual([['contract/undeclared-tool', 'A', 3]]);
  });

  it('judges 20,000 calls against one declared schema, each once (its speed is in npm run bench -- bigrec)', () => {
    const checker = toolContracts(new Map());
    let count = 0;
    const schema = { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer', minimum: 0 } }, required: ['q'] };
    checker.onEvent(exchange(0, 'S', 'tools/list', {}, { tools: [{ name: 't', inputSchema: schema }] }), () => count++);
    const ok = { content: [{ type: 'text', text: 'ok' }] };
    const events = Array.from({ length: 20_000 }, (_, i) => exchange(i + 1, 'S', 'tools/call', { name: 't', arguments: { q: 'x', n: i % 2 ? i : -1 } }, ok));
    for (const e of events) checker.onEvent(e, () => count++);
    expect(count).toBe(10_000);
  });
});

/** A connection opening, as the tap reports it. */
function opened(connectionId: string, transport: 'http' | 'stdio', target: string): TapEvent {
  return { type: 'connection-opened', connection: { connectionId, transport, target } } as unknown as TapEvent;
}

/** A completed request with no session, on the given connection. */
function sessionless(seq: number, connectionId: string, method: string, params: object, result: object): TapEvent {
  const e = exchange(seq, 'x', method, params, result) as unknown as { exchange: Record<string, unknown> };
  const { sessionId: _none, ...ex } = e.exchange;
  return { type: 'exchange-completed', exchange: { ...ex, connectionId, key: `${connectionId}/c2s/${seq}` } } as unknown as TapEvent;
}

describe('declarations without a session', () => {
  const listed = { tools: [{ name: 'search', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } } } }] };
  const answered = (n: unknown) => ({ content: [{ type: 'text', text: JSON.stringify({ n }) }], structuredContent: { n } });
  const run = (events: TapEvent[]) => {
    const checker = toolContracts(new Map());
    const found: Finding[] = [];
    for (const e of events) checker.onEvent(e, (f) => found.push(f));
    return found.map((f) => [f.ruleId, f.where.connectionId, f.pointer]);
  };

  it("HTTP: a stateless server's tools/list judges a call that rode another socket to it", () => {
    const sockets = [opened('http:conn-1', 'http', 'http://127.0.0.1:1/mcp'), opened('http:conn-3', 'http', 'http://127.0.0.1:1/mcp')];
    const list = sessionless(1, 'http:conn-3', 'tools/list', {}, listed);
    // A socket closing ends nothing: the server's declarations outlive it.
    const closed = { type: 'connection-closed', connectionId: 'http:conn-3' } as unknown as TapEvent;
    const call = (n: unknown) => sessionless(2, 'http:conn-1', 'tools/call', { name: 'search', arguments: {} }, answered(n));
    expect(run([...sockets, list, closed, call('warm')])).toEqual([['contract/output-invalid', 'http:conn-1', '/result/structuredContent/n']]);
    expect(run([...sockets, list, closed, call(21)])).toEqual([]);
  });

  it("stdio: one process's tools/list never judges another process's calls", () => {
    const procs = [opened('stdio:1', 'stdio', 'node a.js'), opened('stdio:2', 'stdio', 'node a.js')];
    const list = sessionless(1, 'stdio:1', 'tools/list', {}, listed);
    const call = (conn: string) => sessionless(2, conn, 'tools/call', { name: 'search', arguments: {} }, answered('warm'));
    expect(run([...procs, list, call('stdio:2')])).toEqual([]);
    expect(run([...procs, list, call('stdio:1')])).toEqual([['contract/output-invalid', 'stdio:1', '/result/structuredContent/n']]);
  });
});
