import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { compareExchange, type ReplayedAnswer } from '../../src/replay/compare.js';
import { finishReport, hasDifferences, ReplayReportBuilder, type ReplayReport } from '../../src/replay/replay-report.js';
import { NO_RULES, parseRules } from '../../src/replay/rules.js';
import { renderJUnit, renderJson, renderText } from '../../src/report/replay-diff.js';
import type { StoredExchange } from '../../src/store/types.js';

function recorded(over: Partial<StoredExchange> & { result?: unknown }): StoredExchange {
  const { result, ...rest } = over;
  return {
    key: 'c/c2s/1',
    connectionId: 'c',
    direction: 'c2s',
    id: 7,
    idType: 'number',
    method: 'tools/call',
    target: 'echo',
    era: 'legacy',
    request: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
    response: { jsonrpc: '2.0', id: 7, result: result ?? { content: [{ type: 'text', text: 'Echo: hi' }] } },
    startUs: 0,
    endUs: 2000,
    latencyUs: 2000,
    outcome: 'ok',
    isError: false,
    progress: [],
    responseAfterCancel: false,
    requestSeq: 1,
    responseSeq: 2,
    rowid: 12,
    recordingId: 1,
    state: 'completed',
    ...rest,
  };
}

function answer(result: unknown, over: Partial<ReplayedAnswer> = {}): ReplayedAnswer {
  return {
    response: { jsonrpc: '2.0', id: 7, result },
    outcome: 'ok',
    isError: false,
    latencyUs: 2500,
    progressCount: 0,
    unexpectedServerRequests: [],
    ...over,
  };
}

describe('compareExchange', () => {
  it('finds nothing between equal answers, whatever their key order', () => {
    const r = recorded({ result: { a: 1, b: [1, { c: 2 }] } });
    expect(compareExchange(NO_RULES, r, answer({ b: [1, { c: 2 }], a: 1 }))).toEqual([]);
  });

  it('names the JSON path with both values, and what was added or is missing', () => {
    const r = recorded({ result: { content: [{ type: 'text', text: 'Echo: hi' }], gone: true } });
    const d = compareExchange(NO_RULES, r, answer({ content: [{ type: 'text', text: 'ECHO: hi' }], extra: 1 }));
    expect(d).toEqual([
      { kind: 'value', path: '/result/content/0/text', recorded: 'Echo: hi', replayed: 'ECHO: hi', message: 'changed' },
      { kind: 'value', path: '/result/gone', recorded: true, message: 'missing from the new answer' },
      { kind: 'value', path: '/result/extra', replayed: 1, message: 'added by the new server' },
    ]);
    const tolerant = parseRules('rules:\n  - allowAdded: /result\n  - ignore: /result/gone\n  - replace: "ECHO"\n    with: Echo', 'r.yaml');
    expect(compareExchange(tolerant, r, answer({ content: [{ type: 'text', text: 'ECHO: hi' }], extra: 1 }))).toEqual([]);
  });

  it('allowAdded covers an element the new server appended to an array, and no removed one', () => {
    const r = recorded({ result: { content: [{ type: 'text', text: 'a' }] } });
    const more = answer({
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    });
    expect(compareExchange(NO_RULES, r, more).map((d) => [d.path, d.message])).toEqual([['/result/content/1', 'added by the new server']]);
    const allow = parseRules('rules:\n  - allowAdded: /result/content', 'r.yaml');
    expect(compareExchange(allow, r, more)).toEqual([]);
    expect(compareExchange(allow, r, answer({ content: [] })).map((d) => [d.path, d.message])).toEqual([['/result/content/0', 'missing from the new answer']]);
  });

  it('reports outcome, error code, progress, missing responses and unknown server requests whatever the rules', () => {
    const ignoreAll = parseRules('rules:\n  - ignore: /result\n  - ignore: /error', 'r.yaml');
    const r = recorded({ progress: [{ timeUs: 1, progress: 1 }] });
    const kinds = (a: ReplayedAnswer, rec = r) => compareExchange(ignoreAll, rec, a).map((d) => d.message);
    expect(kinds(answer({}, { outcome: 'tool_error', isError: true, progressCount: 1 }))).toEqual(['outcome ok -> tool_error']);
    expect(kinds(answer({}, { progressCount: 3 }))).toEqual(['1 progress notifications -> 3']);
    expect(
      kinds({ outcome: 'unanswered', isError: false, progressCount: 0, unexpectedServerRequests: ['sampling/createMessage'], transportError: 'child exited' }),
    ).toEqual(['the server sent a sampling/createMessage request the recording has no answer for', 'no response came: child exited']);
    const err = recorded({ outcome: 'jsonrpc_error', errorCode: -32602, response: { jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'bad' } } });
    expect(
      kinds(
        {
          response: { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'x' } },
          outcome: 'jsonrpc_error',
          errorCode: -32601,
          isError: false,
          progressCount: 0,
          unexpectedServerRequests: [],
        },
        err,
      ),
    ).toEqual(['JSON-RPC error code -32602 -> -32601']);
  });

  it('accepts numbers within a tolerance, and no further', () => {
    const rules = parseRules('rules:\n  - tolerance: "10%"\n    path: /result/ms\n  - tolerance: 0.5', 'r.yaml');
    const r = recorded({ result: { ms: 100, n: 3 } });
    expect(compareExchange(rules, r, answer({ ms: 109, n: 3.4 }))).toEqual([]);
    expect(compareExchange(rules, r, answer({ ms: 112, n: 3.6 })).map((d) => d.path)).toEqual(['/result/ms', '/result/n']);
  });
});

describe('replay reports', () => {
  const same = recorded({ rowid: 1, id: 1 });
  const changed = recorded({ rowid: 2, id: 'b"<&', result: { content: [{ type: 'text', text: 'Echo: hi' }] } });
  const slow = recorded({ rowid: 3, id: 3, method: 'tools/list', target: undefined, latencyUs: 2000, result: { tools: [] } });
  const report: ReplayReport = finishReport({
    file: 'rec.db',
    recordingIds: [1],
    target: 'node server.js',
    slowdown: { factor: 1.5, floorUs: 1000, minSamples: 1 },
    pairs: [
      { recorded: same, replayed: answer({ content: [{ type: 'text', text: 'Echo: hi' }] }), differences: [] },
      {
        recorded: changed,
        replayed: answer({ content: [{ type: 'text', text: 'ECHO: hi' }] }),
        differences: compareExchange(NO_RULES, changed, answer({ content: [{ type: 'text', text: 'ECHO: hi' }] })),
      },
      { recorded: slow, replayed: answer({ tools: [] }, { latencyUs: 9000 }), differences: [] },
    ],
  });

  it('text: the exchange, the path, both values, the slowdown and the counts', () => {
    const text = renderText(report, { color: false });
    expect(text).toContain(
      '✗ exchange #2 (id "b\\"<&") tools/call echo\n    /result/content/0/text: changed\n      - recorded: "Echo: hi"\n      + replayed: "ECHO: hi"',
    );
    expect(text).toContain('✗ tools/list: slower\n    p50 2.0 ms -> 9.0 ms (4.50x per call, median); 1 of 1 calls more than 1.5x and 1.0 ms slower');
    expect(text).toContain('3 exchanges replayed: 2 same, 1 different, 0 without response, 1 slower than allowed; 2 differences');
    expect(text).not.toContain('\x1b[');
    expect(renderText(report, { color: true })).toContain('\x1b[31m');
    expect(hasDifferences(report)).toBe(true);
  });

  it('JUnit: valid XML, a suite per method or tool, exactly the failures', () => {
    const xml = renderJUnit(report);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testsuite' || name === 'testcase' }).parse(xml);
    const suites = doc.testsuites.testsuite as { name: string; tests: string; failures: string; testcase: { name: string; failure?: { message: string } }[] }[];
    expect(suites.map((s) => [s.name, s.tests, s.failures])).toEqual([
      ['tools/call echo', '2', '1'],
      ['tools/list', '2', '1'],
    ]);
    expect(suites[0]!.testcase[1]).toMatchObject({ name: 'session 1 tools/call echo #2', failure: { message: '/result/content/0/text: changed' } });
    expect(doc.testsuites.failures).toBe('2');
  });

  it('JUnit: case names a re-record of the same client keeps (session, method or tool, its turn), not rows or ids', () => {
    const take = (rowid: number, recordingId: number, conn: (i: number) => string) =>
      [
        ['echo', 0],
        ['echo', 0],
        ['echo', 1],
      ].map(([tool, session], i) => recorded({ rowid: rowid + i, id: rowid * 10 + i, recordingId, connectionId: conn(Number(session)), target: String(tool) }));
    const names = (exs: StoredExchange[]) => {
      const xml = renderJUnit(
        finishReport({ file: 'f.db', recordingIds: [1], target: 't', pairs: exs.map((r) => ({ recorded: r, replayed: answer({}), differences: [] })) }),
      );
      const b = new ReplayReportBuilder(NO_RULES, { listAll: true });
      exs.forEach((r, i) => b.add(i, r, answer(r.response && 'result' in r.response ? r.response.result : {})));
      expect(renderJUnit(b.finish({ file: 'f.db', recordingIds: [1], target: 't' }))).toBe(xml);
      return [...xml.matchAll(/testcase classname="[^"]*" name="([^"]*)"/g)].map((m) => m[1]);
    };
    const first = names(take(12, 1, (s) => `stdio-${s}`));
    expect(first).toEqual(['session 1 tools/call echo #1', 'session 1 tools/call echo #2', 'session 2 tools/call echo #1']);
    expect(names(take(40, 3, (s) => `conn-${9 - s}`))).toEqual(first);
  });

  it('JSON: counts and every exchange with its differences', () => {
    const json = JSON.parse(renderJson(report));
    expect(json.counts).toEqual({ exchanges: 3, same: 2, different: 1, differences: 2, noResponse: 0, notCompared: 0, notSent: 0, slowdowns: 1 });
    expect(json.exchanges[1]).toMatchObject({ exchange: 2, tool: 'echo', differences: [{ path: '/result/content/0/text' }] });
  });

  it('an exchange recorded without an answer is not compared: neither same nor different, a skipped JUnit case', () => {
    const { response: _none, ...inFlight } = recorded({ rowid: 4, id: 4, outcome: 'pending' });
    const builder = new ReplayReportBuilder(NO_RULES, { listAll: true });
    builder.add(0, same, answer({ content: [{ type: 'text', text: 'Echo: hi' }] }));
    builder.add(1, inFlight, answer({ content: [{ type: 'text', text: 'Echo: hi' }] }));
    const r = builder.finish({ file: 'rec.db', recordingIds: [1], target: 'node server.js' });
    expect(renderText(r, { color: false })).toContain(
      '2 exchanges replayed: 1 same, 0 different, 0 without response, 1 not compared (recorded without an answer); no differences',
    );
    expect(JSON.parse(renderJson(r)).counts).toMatchObject({ same: 1, different: 0, notCompared: 1 });
    expect(hasDifferences(r)).toBe(false);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testcase' }).parse(renderJUnit(r));
    expect(doc.testsuites).toMatchObject({ tests: '2', failures: '0', skipped: '1' });
    expect(doc.testsuites.testsuite.testcase[1].skipped.message).toBe('recorded without an answer: nothing to compare');
    // The same from a report's pairs alone (a report read back without its counts).
    const { counts: _c, ...fromPairs } = r;
    expect(JSON.parse(renderJson(fromPairs as ReplayReport)).counts).toMatchObject({ same: 1, notCompared: 1 });
  });
});
