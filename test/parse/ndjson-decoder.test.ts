import { describe, expect, it } from 'vitest';
import { NdjsonDecoder } from '../../src/parse/ndjson-decoder.js';
import { counter } from '../../src/parse/frame-parser.js';
import type { Frame } from '../../src/model/frame.js';

const dec = (maxLineBytes?: number) => new NdjsonDecoder({ connectionId: 'c', direction: 's2c', seq: counter(), ...(maxLineBytes ? { maxLineBytes } : {}) });

function feed(d: NdjsonDecoder, chunks: Buffer[]): Frame[] {
  const out: Frame[] = [];
  chunks.forEach((c, i) => out.push(...d.push(c, i + 1)));
  out.push(...d.end(chunks.length + 1));
  return out;
}

/** Split a buffer at every given offset. */
function cut(buf: Buffer, at: number[]): Buffer[] {
  const pts = [0, ...at.filter((x) => x > 0 && x < buf.length).sort((a, b) => a - b), buf.length];
  return pts.slice(1).map((p, i) => buf.subarray(pts[i], p));
}

describe('NdjsonDecoder', () => {
  it('after a gap mid-line, skips to the next newline; after a gap at a line boundary, skips nothing', () => {
    const d = dec();
    expect(d.push(Buffer.from('{"jsonrpc":"2.0","id":1,'), 1)).toEqual([]);
    d.gap(false); // the rest of line 1 was lost, and the lost bytes ended mid-line
    const after = d.push(Buffer.from('"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n'), 2);
    expect(after.map((f) => f.kind === 'message' && f.message)).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
    d.gap(true);
    const next = d.push(Buffer.from('{"jsonrpc":"2.0","id":3,"result":{}}\n'), 3);
    expect(next.map((f) => f.kind === 'message' && f.message)).toEqual([{ jsonrpc: '2.0', id: 3, result: {} }]);
  });

  const msg = { jsonrpc: '2.0', id: 'é-1', method: 'tools/call', params: { name: 'echo', arguments: { text: '日本語 🎉' } } };
  const line = Buffer.from(JSON.stringify(msg) + '\n');

  it('decodes a message split at every byte boundary, including inside multi-byte characters', () => {
    for (let i = 1; i < line.length; i++) {
      const frames = feed(dec(), cut(line, [i]));
      expect(frames).toHaveLength(1);
      expect(frames[0]!.kind).toBe('message');
      expect((frames[0] as Extract<Frame, { kind: 'message' }>).message).toEqual(msg);
    }
  });

  it('keeps ids verbatim: 1 and "1" stay different', () => {
    const frames = feed(dec(), [Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":"1","result":{}}\n')]);
    const ids = frames.map((f) => (f as Extract<Frame, { kind: 'message' }>).message).map((m) => (m as { id: unknown }).id);
    expect(ids).toStrictEqual([1, '1']);
  });

  it('accepts CRLF, skips blank lines and empty chunks', () => {
    const frames = feed(dec(), [
      Buffer.alloc(0),
      Buffer.from('{"jsonrpc":"2.0","method":"a"}\r\n\r\n  \n'),
      Buffer.alloc(0),
      Buffer.from('{"jsonrpc":"2.0","method":"b"}\r\n'),
    ]);
    expect(frames.map((f) => f.kind)).toEqual(['message', 'message']);
    expect(frames[0]!.raw.toString()).toBe('{"jsonrpc":"2.0","method":"a"}');
  });

  it('turns non-JSON lines into invalid frames and goes on', () => {
    const frames = feed(dec(), [Buffer.from('Server started on stdio\n{"jsonrpc":"2.0","method":"x"}\n{"foo":1}\n')]);
    expect(frames.map((f) => (f.kind === 'invalid' ? f.reason : f.kind))).toEqual(['not_json', 'message', 'not_jsonrpc']);
  });

  it('flags an unterminated truncated message at EOF, and decodes a complete one without newline', () => {
    expect(feed(dec(), [Buffer.from('{"jsonrpc":"2.0","id":1,"res')]).map((f) => (f.kind === 'invalid' ? f.reason : f.kind))).toEqual(['truncated_at_eof']);
    expect(feed(dec(), [Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}')]).map((f) => f.kind)).toEqual(['message']);
  });

  it('splits batches into one frame per element', () => {
    const frames = feed(dec(), [Buffer.from('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]\n[]\n')]);
    expect(
      frames.map((f) => (f.kind === 'message' ? `${f.messageKind}:${f.batch?.index}/${f.batch?.size}` : f.kind === 'invalid' ? f.reason : f.kind)),
    ).toEqual(['request:0/2', 'notification:1/2', 'empty_batch']);
  });

  it('skips lines over the limit as one too_long frame and resumes at the next newline', () => {
    const big = 'x'.repeat(5000);
    const frames = feed(dec(1000), cut(Buffer.from(`"${big}"\n{"jsonrpc":"2.0","method":"ok"}\n`), [10, 600, 1200, 3000]));
    expect(frames.map((f) => (f.kind === 'invalid' ? f.reason : f.kind))).toEqual(['too_long', 'message']);
  });

  it('decodes an 8 MB message delivered in 64 KiB chunks', () => {
    const payload = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, result: { blob: 'a'.repeat(8 * 1024 * 1024) } }) + '\n');
    const chunks: Buffer[] = [];
    for (let i = 0; i < payload.length; i += 65536) chunks.push(payload.subarray(i, i + 65536));
    const frames = feed(dec(), chunks);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.raw.length).toBe(payload.length - 1);
    expect(frames[0]!.timeUs).toBe(1); // timed by the first byte
  });

  it('decodes stderr lines as log frames', () => {
    const d = new NdjsonDecoder({ connectionId: 'c', direction: 's2c', channel: 'stderr', seq: counter() });
    const frames = [...d.push(Buffer.from('booting\n{"not":"parsed"}\npartial'), 1), ...d.end(2)];
    expect(frames.map((f) => (f.kind === 'log' ? f.text : f.kind))).toEqual(['booting', '{"not":"parsed"}', 'partial']);
  });
});
