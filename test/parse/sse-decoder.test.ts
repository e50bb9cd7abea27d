import { describe, expect, it } from 'vitest';
import { SseDecoder, type SseEvent } from '../../src/parse/sse-decoder.js';

function decodeAll(chunks: (string | Buffer)[]): SseEvent[] {
  const d = new SseDecoder();
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...d.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : c));
  out.push(...d.end());
  return out;
}

describe('SseDecoder', () => {
  it('decodes events with event, id, retry and multi-line data', () => {
    const ev = decodeAll(['event: message\nid: 7\nretry: 3000\ndata: {"a":\ndata: 1}\n\n']);
    expect(ev).toEqual([{ event: 'message', id: '7', retry: 3000, data: '{"a":\n1}' }]);
  });

  it('skips comments and handles CRLF and lone CR line ends', () => {
    expect(decodeAll([': keep-alive\r\ndata: a\r\n\r\ndata: b\r\rdata: c\n\n'])).toEqual([{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
  });

  it('dispatches the 2025-11-25 priming event (id + empty data) with data ""', () => {
    expect(decodeAll(['id: p1\ndata: \n\n'])).toEqual([{ id: 'p1', data: '' }]);
  });

  it('does not dispatch a block without data, and keeps lastEventId', () => {
    const d = new SseDecoder();
    expect(d.push(Buffer.from('id: 9\n\n'))).toEqual([]);
    expect(d.lastEventId).toBe('9');
  });

  it('survives every split point, including inside a UTF-8 character and between CR and LF', () => {
    const text = 'event: message\r\ndata: {"t":"héllo €𝄞"}\r\n\r\ndata: x\r\n\r\n';
    const bytes = Buffer.from(text, 'utf8');
    const whole = decodeAll([bytes]);
    expect(whole).toEqual([{ event: 'message', data: '{"t":"héllo €𝄞"}' }, { data: 'x' }]);
    for (let i = 1; i < bytes.length; i++) {
      expect(decodeAll([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(whole);
    }
    // one byte at a time
    expect(decodeAll([...bytes].map((b) => Buffer.from([b])))).toEqual(whole);
  });

  it('drops an event left without its blank line at end of stream, strips a BOM, strips one space only', () => {
    expect(decodeAll(['\uFEFFdata:  two spaces\n\ndata: unfinished'])).toEqual([{ data: ' two spaces' }]);
  });

  it('treats a field without colon as a field with empty value', () => {
    expect(decodeAll(['data\n\n'])).toEqual([{ data: '' }]);
  });
});
