/**
 * The mock over a big recording: answers indexed by key hash and read on demand give the same plans
 * as answers read all at once, including repeats, progress, misses with their nearest hint, and two
 * requests whose keys share a hash (found here by search, then recorded).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MockResponder } from '../../src/mock/mock-responder.js';
import { indexRecordedAnswers, keyHash, readRecordedAnswers } from '../../src/mock/recorded-answers.js';
import type { JsonRpcRequest } from '../../src/model/jsonrpc.js';
import { requestKey } from '../../src/replay/mock-matcher.js';
import { NO_RULES } from '../../src/replay/rules.js';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { T0, TrafficScript } from '../sinks/traffic-script.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-answer-index-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const echo = (text: string) => ({ name: 'echo', arguments: { text } });

/** Two echo texts whose request keys have the same 32-bit hash. */
function collidingTexts(): [string, string] {
  // The key spelled out (checked against requestKey below): computing it for each candidate is slow.
  const key = (text: string) => `tools/call {"arguments":{"text":"${text}"},"name":"echo"}`;
  expect(key('7919')).toBe(requestKey(NO_RULES, 'tools/call', echo('7919')));
  const seen = new Map<number, string>();
  for (let n = 0; n < 2_000_000; n++) {
    const text = String(n * 7919); // a collision comes after ~100,000 of these (`c${n}` takes 1.7 million)
    const h = keyHash(key(text));
    const other = seen.get(h);
    if (other !== undefined) return [other, text];
    seen.set(h, text);
  }
  throw new Error('no collision found');
}

async function recording(texts: readonly string[]): Promise<string> {
  const s = new TrafficScript('c1').open({ transport: 'stdio', target: 'srv' }, 0);
  s.handshake(0);
  let id = 1;
  let at = 10;
  for (const text of texts) {
    s.request(id, 'tools/call', { ...echo(text), _meta: { progressToken: id } }, at);
    s.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: 1 } }, at + 1);
    s.result(id++, { content: [{ type: 'text', text: `${text} #${id}` }] }, at + 2);
    at += 5;
  }
  s.request(id, 'tools/call', echo('never answered'), at);
  const path = join(dir, 'rec.db');
  const rec = new SqliteRecorder({
    path,
    recording: { transport: 'stdio', target: 'srv', startedUs: T0, mcptapVersion: '0.1.0-test' },
    logger: silentLogger,
    clock: { nowUs: () => T0 + 1_000_000 },
  });
  for (const e of s.events) rec.onEvent(e);
  await rec.close();
  return path;
}

describe('the mock over an index of the recording', () => {
  it('plans every request as the answers read all at once do', async () => {
    const [x, y] = collidingTexts();
    expect(x).not.toBe(y);
    const store = RecordingStore.open(await recording(['a', 'a', 'b', x, y, 'a']));
    const all = readRecordedAnswers(store, [1], 'rec.db');
    const index = indexRecordedAnswers(store, [1], 'rec.db', NO_RULES);
    expect(index.count).toBe(all.answers.length);
    expect(index.unanswered).toBe(all.unanswered);
    const inMemory = new MockResponder(all);
    const onDemand = new MockResponder(index);
    let id = 100;
    const req = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({ jsonrpc: '2.0', id: id++, method, ...(params ? { params } : {}) });
    const asked = [
      req('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'other' } }),
      ...[1, 2, 3, 4].map(() => req('tools/call', { ...echo('a'), _meta: { progressToken: 'mine' } })),
      req('tools/call', echo('b')),
      req('tools/call', echo(y)),
      req('tools/call', echo(x)),
      req('tools/call', echo('zzz')),
      req('resources/read', { uri: 'file:///x' }),
      req('ping'),
    ];
    const plans = asked.map((r) => {
      const plan = onDemand.answer(r);
      expect(plan).toEqual(inMemory.answer(r));
      return plan;
    });
    const texts = plans.map((p) => (p.messages.at(-1)!.message as { result?: { content?: { text: string }[] } }).result?.content?.[0]?.text);
    // The recorded answers in order, the last one repeated; each colliding key its own answer.
    expect(texts.slice(1, 8)).toEqual(['a #2', 'a #3', 'a #7', 'a #7', 'b #4', `${y} #6`, `${x} #5`]);
    expect(plans[1]!.messages).toHaveLength(2); // the recorded progress, under the caller's token
    expect(plans.map((p) => p.outcome)).toEqual(['hit', 'hit', 'hit', 'hit', 'hit', 'hit', 'hit', 'hit', 'miss', 'miss', 'builtin']);
    expect(plans[8]!.nearest).toMatchObject({ path: '/params/arguments/text', recorded: 'a', requested: 'zzz' });
    expect(onDemand.stats).toEqual(inMemory.stats);
    store.close();
  });
});
