/** A text baseline's clock and connection ids: what keeps `--update next.jsonl` the same from run to run. */
import { describe, expect, it } from 'vitest';
import { baselineConnectionId, RecordedTimes } from '../../src/replay/recorded-times.js';

describe('RecordedTimes', () => {
  it('stamps a message with its recorded time when it has one, else with its session latest (or the start)', () => {
    const t = new RecordedTimes(1000);
    expect(t.at('a')).toBe(1000); // opened: the recording's start
    expect(t.at('a', 5000)).toBe(5000); // a request, at its recorded time
    expect(t.at('a')).toBe(5000); // progress: the session's latest
    expect(t.at('b')).toBe(1000); // another session: its own latest
    expect(t.at('a', 3000)).toBe(3000); // an answer recorded earlier than a later request's start is kept as recorded
    expect(t.at('a')).toBe(5000);
    expect(t.nowUs()).toBe(5000);
  });
});

describe('baselineConnectionId', () => {
  it('drops the prefixes earlier updates added, and only those', () => {
    expect(baselineConnectionId('1/connection stdio')).toBe('1/connection stdio');
    expect(baselineConnectionId('1/connection 1/connection stdio')).toBe('1/connection stdio');
    expect(baselineConnectionId('1/connection 2/connection 7')).toBe('2/connection 7');
    expect(baselineConnectionId('1/connection 1/session 5b2c')).toBe('1/session 5b2c');
    expect(baselineConnectionId('1/modern')).toBe('1/modern');
  });
});
