/**
 * The replay beside the recording (ui-replay.ts): a replay result is checked and indexed by row, and
 * the replayed answer is the recorded one with each value difference applied at its JSON Pointer.
 * The access cookie is read from a Cookie header exactly by name (ui-auth.ts).
 */
import { describe, expect, it } from 'vitest';
import { cookieValue } from '../../src/explore/ui-auth.js';
import { indexReplay, replayedAnswer } from '../../src/explore/ui-replay.js';
import { McptapError } from '../../src/errors.js';

describe('replayedAnswer', () => {
  const recorded = { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'hi' }], 'a/b': 1 } };

  it('sets each differing pointer to the replayed value and leaves the recorded answer as it was', () => {
    const answer = replayedAnswer(recorded, [
      { kind: 'value', path: '/result/content/0/text', recorded: 'hi', replayed: 'Echo: hi', message: 'changed' },
      { kind: 'value', path: '/result/a~1b', recorded: 1, replayed: 2, message: 'changed' },
      { kind: 'outcome', message: 'ok -> tool_error' },
    ]);
    expect(answer).toEqual({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Echo: hi' }], 'a/b': 2 } });
    expect(recorded.result.content[0]!.text).toBe('hi');
  });

  it('removes what the replay lacks, adds what it added, and with no difference gives the same answer', () => {
    const answer = replayedAnswer(recorded, [
      { kind: 'value', path: '/result', recorded: {}, message: 'gone' },
      { kind: 'value', path: '/error', replayed: { code: -32602, message: 'no' }, message: 'added' },
    ]);
    expect(answer).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'no' } });
    expect(replayedAnswer(recorded, [])).toEqual(recorded);
  });
});

describe('indexReplay', () => {
  it('indexes a replay result by recorded row', () => {
    const index = indexReplay(
      { file: 'tap.db', target: 'node s.js', counts: { same: 1 }, exchanges: [{ exchange: 7, method: 'tools/call', differences: [] }] },
      'r.json',
    );
    expect(index.rows.get(7)).toMatchObject({ method: 'tools/call', differences: [] });
    expect(index.rows.has(8)).toBe(false);
  });

  it('refuses what is not a replay result, naming the file', () => {
    for (const bad of [null, [], { file: 'x' }, { exchanges: [] }, { file: 'x', exchanges: [{ differences: [] }] }]) {
      expect(() => indexReplay(bad, 'r.json')).toThrow(McptapError);
      expect(() => indexReplay(bad, 'r.json')).toThrow(/r\.json/);
    }
  });
});

describe('cookieValue', () => {
  it('finds the cookie by its exact name among others, and nothing when it is absent', () => {
    expect(cookieValue('a=1; mcptap_ui=tok; b=2', 'mcptap_ui')).toBe('tok');
    expect(cookieValue('xmcptap_ui=evil; mcptap_uix=evil', 'mcptap_ui')).toBeUndefined();
    expect(cookieValue(undefined, 'mcptap_ui')).toBeUndefined();
  });
});
