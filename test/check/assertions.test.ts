// Assertions over exchanges (issue 32 item 7), judged on a real recording: the SDK 1.x notes server
// driven by the SDK client through `mcptap stdio --record`. Each expectation is shown holding on the
// recording and failing when the bound or selector says the opposite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThroughTap } from '../helpers/tap-client.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { Reader } from '../../src/data-file/validation.js';
import { parseYamlSource } from '../../src/data-file/yaml-source.js';
import { McptapError } from '../../src/errors.js';
import { parseAssertions } from '../../src/check/assertions/parse-assertions.js';
import { assertionsChecker } from '../../src/check/assertions/assertion-checker.js';
import type { Finding } from '../../src/check/finding.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-assert-'));
const db = join(dir, 'notes.db');

beforeAll(async () => {
  const tapped = await connectThroughTap(['--record', db], notesCommand(['--slow', '0.1']));
  const { client } = tapped;
  await client.listTools();
  for (const query of ['milk', 'eggs', 'zzz']) await client.callTool({ name: 'search', arguments: { query } });
  await client.callTool({ name: 'delete_note', arguments: { id: 'nope' } });
  await client.callTool({ name: 'summarize', arguments: {} }, undefined, { onprogress: () => {} });
  await tapped.close();
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(yaml: string) {
  const { value, locate } = parseYamlSource(yaml, (line, m) => new McptapError('MCPTAP_CHECK_RULES_INVALID', `rules.yaml:${line}: ${m}`));
  const r = new Reader();
  const list = parseAssertions((value as { assertions: unknown }).assertions, r, ['assertions'], (p) => `rules.yaml:${locate(p, false)}`);
  return { list, issues: r.issues.map((i) => `${locate(i.path, !!i.atKey)}: ${i.message}`) };
}

function check(yaml: string): Finding[] {
  const { list, issues } = load(yaml);
  expect(issues).toEqual([]);
  const store = RecordingStore.open(db);
  try {
    const checker = assertionsChecker(list)(new Map());
    const out: Finding[] = [];
    for (const e of store.events(store.latestRecordingId()!)) checker.onEvent(e, (f) => out.push(f));
    checker.finish((f) => out.push(f));
    return out;
  } finally {
    store.close();
  }
}

describe('assertions on a recording of the notes server', () => {
  it('hold where the traffic deserves it', () => {
    const findings = check(`
assertions:
  - name: search works
    select: { method: tools/call, tool: search }
    expect:
      - count = 3
      - p95 <= 5s
      - error_rate = 0
      - /result/structuredContent/results matches ^\\[
      - /params/arguments/query != ""
  - name: listed first
    select: { method: tools/call }
    preceded_by: { method: tools/list }
  - name: delete fails as a tool
    select: { tool: delete_note }
    expect: [tool_error_rate = 100%, jsonrpc_error_rate = 0, /result/isError = true]
  - name: progress
    select: { tool: summarize }
    expect: [progress increases, no progress after cancel, count >= 1]
`);
    expect(findings).toEqual([]);
    // Not vacuous: the summarize call carried its ten progress notifications.
    const store = RecordingStore.open(db);
    const events = [...store.events(store.latestRecordingId()!, { types: new Set(['exchange-completed']) })];
    store.close();
    const summarize = events.flatMap((e) => (e.type === 'exchange-completed' && e.exchange.target === 'summarize' ? [e.exchange] : []));
    expect(summarize.map((x) => x.progress.length)).toEqual([10]);
  });

  it('fail, each named, where the traffic deserves the opposite', () => {
    const findings = check(`
assertions:
  - name: search is instant
    select: { tool: search }
    expect: [p50 <= 1us, count = 2, error_rate > 50%]
  - name: search finds milk
    select: { tool: search }
    expect: ['/result/structuredContent/results/0/title = "groceries"']
  - name: calls need a prompt list
    select: { method: tools/call }
    preceded_by: { method: prompts/list }
  - name: typo in tool
    select: { tool: serach }
    expect: [/result/isError = false]
`);
    const by = (id: string) => findings.filter((f) => f.ruleId === id);
    expect(by('assert/search-is-instant').map((f) => f.expected)).toEqual(['p50 <= 1us', 'count = 2', 'error_rate > 50%']);
    expect(by('assert/search-is-instant')[1]!.found).toBe('3');
    // "milk" and "eggs" find the groceries note; "zzz" finds nothing: its pointer is absent, located at its exchange.
    const milk = by('assert/search-finds-milk');
    expect(milk).toHaveLength(1);
    expect(milk[0]).toMatchObject({
      pointer: '/result/structuredContent/results/0/title',
      found: '(absent)',
      where: { method: 'tools/call', tool: 'search', side: 'server' },
    });
    expect(milk[0]!.where.exchangeKey).toBeTruthy();
    expect(by('assert/calls-need-a-prompt-list')).toHaveLength(5);
    expect(by('assert/typo-in-tool')).toEqual([expect.objectContaining({ found: 'none', message: expect.stringContaining('no exchange matched') })]);
  });
});

describe('the assertions list refuses what it cannot judge, at file:line', () => {
  it('names each problem with its line', () => {
    const { issues } = load(`
assertions:
  - name: a
    select: { tool: search, methd: x }
    expect: [p95 <= 200, latency < 1s, /foo = 1, /result/x matches (]
  - name: b
  - name: a
    expect: [count = 1]
`);
    expect(issues).toEqual([
      expect.stringMatching(/^4: unknown field \(did you mean "method"/),
      expect.stringMatching(/^5: .*p95 compares with a duration/),
      expect.stringMatching(/^5: .*METRIC OP VALUE/),
      expect.stringMatching(/^5: \/foo starts at the request's params or the response/),
      expect.stringMatching(/^5: not a regular expression/),
      expect.stringMatching(/^6: .*needs "expect" or "preceded_by"/),
      expect.stringMatching(/^7: .*same rule id assert\/a/),
    ]);
  });
});
