import { describe, expect, it } from 'vitest';
import { SayOnce } from '../../src/util/say-once.js';

describe('SayOnce', () => {
  it('says the first of each topic, counts the rest, and builds a message only when it says it', () => {
    const lines: string[] = [];
    const said = new SayOnce((m) => lines.push(m));
    let built = 0;
    const msg = (t: string) => () => (built++, `${t} failed`);
    expect(said.count('a', msg('a'))).toBe(1);
    expect(said.count('a', msg('a'))).toBe(2);
    expect(said.count('b', msg('b'))).toBe(1);
    expect(lines).toEqual(['a failed', 'b failed']);
    expect(built).toBe(2);
    expect(said.said('a') && said.said('b') && !said.said('c')).toBe(true);
    said.forgetAll();
    expect(said.said('a')).toBe(false);
    said.count('a', msg('a'));
    expect(lines).toEqual(['a failed', 'b failed', 'a failed']);
  });
});
