/** The mock's pure core: keys, recorded order, the last answer repeating, nearest candidates. No IO. */
import { describe, expect, it } from 'vitest';
import { describeMiss, MockMatcher, requestKey } from '../../src/replay/mock-matcher.js';
import { NO_RULES, parseRules } from '../../src/replay/rules.js';

const call = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  name,
  arguments: args,
  ...(meta ? { _meta: meta } : {}),
});

describe('request keys', () => {
  it('are the method plus canonical params, _meta left out', () => {
    expect(requestKey(NO_RULES, 'tools/call', call('echo', { message: 'hi' }, { progressToken: 7, traceparent: 'x' }))).toBe(
      'tools/call {"arguments":{"message":"hi"},"name":"echo"}',
    );
    expect(requestKey(NO_RULES, 'tools/list', undefined)).toBe('tools/list');
    expect(requestKey(NO_RULES, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } })).toBe('tools/list');
    // Key order does not matter.
    expect(requestKey(NO_RULES, 'x', { b: 1, a: 2 })).toBe(requestKey(NO_RULES, 'x', { a: 2, b: 1 }));
  });

  it('read redaction tokens as <redacted>, whatever key made them, in values and inside text', () => {
    const a = requestKey(
      NO_RULES,
      'tools/call',
      call('s', { api_key: 'redacted:hmac-sha256:0123456789abcdef', q: 'k=redacted:hmac-sha256:aaaaaaaaaaaaaaaa;' }),
    );
    const b = requestKey(
      NO_RULES,
      'tools/call',
      call('s', { api_key: 'redacted:hmac-sha256:fedcba9876543210', q: 'k=redacted:hmac-sha256:bbbbbbbbbbbbbbbb;' }),
    );
    expect(a).toBe('tools/call {"arguments":{"api_key":"<redacted>","q":"k=<redacted>;"},"name":"s"}');
    expect(b).toBe(a);
    // Not a token: kept as it is.
    expect(requestKey(NO_RULES, 'tools/call', call('s', { api_key: 'redacted:hmac-sha256:xyz' }))).toContain('"redacted:hmac-sha256:xyz"');
  });

  it('follow the match rules in scope (ignore, normalise)', () => {
    const rules = parseRules(
      ['rules:', '  - tool: clock', '    ignore: /params/arguments/when', '  - normalise: uuid', '    path: /params/arguments/id'].join('\n'),
      'r.yaml',
    );
    expect(requestKey(rules, 'tools/call', call('clock', { when: 'now', zone: 'UTC' }))).toBe('tools/call {"arguments":{"zone":"UTC"},"name":"clock"}');
    // Scoped to the clock tool: echo keeps its `when`.
    expect(requestKey(rules, 'tools/call', call('echo', { when: 'now' }))).toContain('"when":"now"');
    expect(requestKey(rules, 'tools/call', call('get', { id: '0b5c4d1e-9a3f-4b6e-8c2d-1f0e9d8c7b6a' }))).toBe(
      'tools/call {"arguments":{"id":"<uuid>"},"name":"get"}',
    );
  });
});

describe('MockMatcher', () => {
  const recorded = [
    { method: 'tools/call', params: call('counter', {}), answer: 'first' },
    { method: 'tools/call', params: call('echo', { message: 'hi' }), answer: 'echo-hi' },
    { method: 'tools/call', params: call('counter', {}), answer: 'second' },
    { method: 'tools/list', answer: 'tools' },
  ];

  it('answers identical requests in recorded order, then repeats the last', () => {
    const m = new MockMatcher(recorded, NO_RULES);
    const counter = () => m.match('tools/call', call('counter', {}, { progressToken: 'p' }));
    expect(counter()).toMatchObject({ hit: true, answer: 'first', index: 0, repeated: false });
    expect(counter()).toMatchObject({ hit: true, answer: 'second', index: 1, repeated: false });
    expect(counter()).toMatchObject({ hit: true, answer: 'second', index: 1, repeated: true });
    // Other keys keep their own cursor.
    expect(m.match('tools/list', {})).toMatchObject({ hit: true, answer: 'tools' });
    expect(m.size).toBe(3);
  });

  it('names the key and the nearest candidate with the path where they differ', () => {
    const m = new MockMatcher(recorded, NO_RULES);
    const miss = m.match('tools/call', call('echo', { message: 'bye' }));
    expect(miss).toEqual({
      hit: false,
      key: 'tools/call {"arguments":{"message":"bye"},"name":"echo"}',
      nearest: {
        key: 'tools/call {"arguments":{"message":"hi"},"name":"echo"}',
        path: '/params/arguments/message',
        recorded: 'hi',
        requested: 'bye',
        differences: 1,
      },
    });
    expect(describeMiss(miss as { key: string })).toBe(
      'no recorded request matches tools/call {"arguments":{"message":"bye"},"name":"echo"}; nearest: ' +
        'tools/call {"arguments":{"message":"hi"},"name":"echo"} (differs at /params/arguments/message: recorded "hi", requested "bye")',
    );
  });

  it('prefers a candidate for the same tool, and says when no request had the method', () => {
    const m = new MockMatcher(recorded, NO_RULES);
    const extra = m.match('tools/call', call('echo', { message: 'hi', loud: true }));
    expect(extra).toMatchObject({ hit: false, nearest: { path: '/params/arguments/loud', requested: true } });
    const other = m.match('prompts/get', { name: 'greet' });
    expect(other).toEqual({ hit: false, key: 'prompts/get {"name":"greet"}' });
    expect(describeMiss(other as { key: string })).toContain('none with this method');
  });
});
