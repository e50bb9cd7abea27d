/**
 * Fuzzing the two byte decoders (ndjson for stdio, SSE for HTTP): whatever the bytes and wherever
 * the chunks are cut, they never throw, give the same frames or events, hand back every line's
 * bytes exactly (the frames' raw bytes, concatenated, are the input's non-blank lines), and copy
 * each input byte at most once (Buffer.concat counted: the check of linear work).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { NdjsonDecoder } from '../../src/parse/ndjson-decoder.js';
import { counter, parseMessageBytes } from '../../src/parse/frame-parser.js';
import { SseDecoder, type SseEvent } from '../../src/parse/sse-decoder.js';
import type { Frame } from '../../src/model/frame.js';
import { copiedBytes, cutAt, cuts, fuzz } from './fuzz-harness.js';

/** A line as a stdio peer might write it: a JSON-RPC message, a batch, JSON that is not JSON-RPC, or any bytes. */
const lineBytes = fc.oneof(
  fc
    .record({ id: fc.oneof(fc.integer(), fc.string()), method: fc.string(), params: fc.jsonValue({ maxDepth: 2 }) })
    .map((m) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...m }))),
  fc.array(fc.record({ id: fc.integer(), result: fc.jsonValue({ maxDepth: 1 }) }), { maxLength: 4 }).map((b) => Buffer.from(JSON.stringify(b))),
  fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc.string({ unit: 'binary', maxLength: 60 }).map((s) => Buffer.from(s.replace(/\n/g, ''), 'utf8')),
  fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a.filter((b) => b !== 0x0a))),
  fc.constantFrom(Buffer.from(''), Buffer.from(' \t'), Buffer.from('\r'), Buffer.from('{"jsonrpc":"2.0","id":1,"res')),
);

const stream = fc.record({
  lines: fc.array(fc.record({ bytes: lineBytes, crlf: fc.boolean() }), { maxLength: 12 }),
  finalNewline: fc.boolean(),
});

function joinLines(s: { lines: { bytes: Buffer; crlf: boolean }[]; finalNewline: boolean }): { input: Buffer; lines: Buffer[] } {
  const lines = s.lines.map((l) => (l.crlf ? Buffer.concat([l.bytes, Buffer.from('\r')]) : l.bytes));
  const parts = lines.flatMap((l, i) => (i < lines.length - 1 || s.finalNewline ? [l, Buffer.from('\n')] : [l]));
  return { input: Buffer.concat(parts), lines };
}

/**
 * A frame in one line of text, without its arrival time (which chunking changes: a frame is timed
 * by its first byte's chunk) or an invalid frame's detail (the parser's wording).
 */
const shape = (frames: Omit<Frame, 'timeUs'>[]) =>
  frames.map(
    (f) =>
      `${f.seq} ${f.kind} ${f.kind === 'invalid' ? f.reason : ''} ${f.raw.toString('hex')} ${f.kind === 'message' ? JSON.stringify([f.message, f.batch]) : ''}`,
  );

function decodeNdjson(chunks: Buffer[], maxLineBytes: number, channel: 'stdio' | 'stderr' = 'stdio'): Frame[] {
  const d = new NdjsonDecoder({ connectionId: 'c', direction: 's2c', channel, seq: counter(), maxLineBytes });
  const out: Frame[] = [];
  chunks.forEach((c, i) => out.push(...d.push(c, i + 1)));
  out.push(...d.end(chunks.length + 1));
  return out;
}

/** What the decoder must give for a line (the reference model): nothing for a blank one, one too_long frame past the limit, else the parsed message(s). */
function expectedFrames(lines: Buffer[], maxLineBytes: number, lastUnterminated: boolean): Frame[] {
  const seq = counter();
  const out: Frame[] = [];
  lines.forEach((line, i) => {
    if (line.length > maxLineBytes) {
      const head = line.subarray(0, Math.min(4096, maxLineBytes));
      out.push({
        seq: seq.next(),
        connectionId: 'c',
        direction: 's2c',
        channel: 'stdio',
        timeUs: 0,
        raw: head,
        kind: 'invalid',
        reason: 'too_long',
        detail: '',
      });
      return;
    }
    const body = line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
    if (/^[ \t\r]*$/.test(body.toString('latin1'))) return;
    for (const f of parseMessageBytes(body, { connectionId: 'c', direction: 's2c', channel: 'stdio', timeUs: 0 }, seq)) {
      if (lastUnterminated && i === lines.length - 1 && f.kind === 'invalid' && f.reason === 'not_json') out.push({ ...f, reason: 'truncated_at_eof' });
      else out.push(f);
    }
  });
  return out;
}

describe('fuzz: ndjson decoder', () => {
  it('any chunking gives the frames of the reference model; raw bytes are the lines, each byte copied at most once', () => {
    fuzz(
      'ndjson: chunking and byte-exact lines',
      fc.property(stream, cuts(), fc.constantFrom(16, 64, 1 << 26), (s, at, maxLineBytes) => {
        const { input, lines } = joinLines(s);
        const whole = decodeNdjson([input], maxLineBytes);
        const { value: cut, copied } = copiedBytes(() => decodeNdjson(cutAt(input, at), maxLineBytes));
        assert.deepEqual(shape(cut), shape(whole));
        assert.ok(copied <= input.length, `copied ${copied} bytes of ${input.length}`);
        // Byte-exact: each frame's raw bytes are its line's (the model's), so the non-blank lines come back whole.
        assert.deepEqual(shape(whole), shape(expectedFrames(lines, maxLineBytes, !s.finalNewline && lines.length > 0)));
      }),
    );
  });

  it('stderr: one log frame per non-blank line, its text the line exactly, under any chunking', () => {
    fuzz(
      'ndjson: stderr lines',
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')),
          { maxLength: 10 },
        ),
        cuts(512),
        (lines, at) => {
          const input = Buffer.from(lines.map((l) => `${l}\n`).join(''));
          const frames = decodeNdjson(cutAt(input, at), 1 << 26, 'stderr');
          assert.deepEqual(
            frames.map((f) => (f.kind === 'log' ? f.text : f.kind)),
            lines.filter((l) => !/^[ \t]*$/.test(l)),
          );
        },
      ),
      { share: 0.3 },
    );
  });

  it('a gap (bytes lost) anywhere never throws and decoding resumes at a line boundary', () => {
    fuzz(
      'ndjson: gaps',
      fc.property(stream, cuts(), fc.array(fc.record({ at: fc.nat(12), endedAtNewline: fc.boolean() }), { maxLength: 3 }), (s, at, gaps) => {
        const { input } = joinLines(s);
        const d = new NdjsonDecoder({ connectionId: 'c', direction: 's2c', seq: counter(), maxLineBytes: 64 });
        const out: Frame[] = [];
        cutAt(input, at).forEach((c, i) => {
          for (const g of gaps) if (g.at === i) d.gap(g.endedAtNewline);
          out.push(...d.push(c, i));
        });
        out.push(...d.end(99));
        assert.ok(out.every((f) => input.includes(f.raw)));
        assert.equal(d.buffered, 0);
      }),
      { share: 0.3 },
    );
  });
});

/** SSE text: fields, comments, CR/LF/CRLF line ends, a BOM, and any characters, so that every branch is met. */
const sseBytes = fc
  .array(
    fc.oneof(
      fc.constantFrom('data:', 'data: ', 'id:', 'id: ', 'event:', 'retry:', 'retry: 100', ':', '\n', '\r', '\r\n', '\n\n', '\uFEFF', '\u0000', ' '),
      fc.string({ unit: 'grapheme', maxLength: 12 }),
    ),
    { maxLength: 40 },
  )
  .map((parts) => Buffer.from(parts.join(''), 'utf8'));

function decodeSse(chunks: Buffer[]): { events: SseEvent[]; lastId: string | undefined } {
  const d = new SseDecoder();
  const events: SseEvent[] = [];
  for (const c of chunks) events.push(...d.push(c));
  events.push(...d.end());
  return { events, lastId: d.lastEventId };
}

/** An event as a server writes it (WHATWG rules): data lines split at line ends, id/event without line ends. */
const sseEvent = fc.record(
  {
    data: fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/\r\n?/g, '\n')),
    event: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map((s) => s.replace(/[\r\n]/g, '_')),
    id: fc.string({ unit: 'grapheme', maxLength: 10 }).map((s) => s.replace(/[\r\n\u0000]/g, '_')),
    retry: fc.nat(),
  },
  { requiredKeys: ['data'] },
);

function encodeSse(events: SseEvent[], eol: string): Buffer {
  const lines: string[] = [];
  for (const e of events) {
    if (e.event !== undefined) lines.push(`event: ${e.event}`);
    if (e.id !== undefined) lines.push(`id: ${e.id}`);
    if (e.retry !== undefined) lines.push(`retry: ${e.retry}`);
    for (const d of e.data.split('\n')) lines.push(`data: ${d}`);
    lines.push('');
  }
  return Buffer.from(lines.map((l) => l + eol).join(''), 'utf8');
}

describe('fuzz: SSE decoder', () => {
  it('any bytes: never throws; any chunking gives the same events; each byte copied at most once', () => {
    fuzz(
      'sse: chunking',
      fc.property(sseBytes, cuts(256), (input, at) => {
        const whole = decodeSse([input]);
        const { value: cut, copied } = copiedBytes(() => decodeSse(cutAt(input, at)));
        assert.deepEqual(cut, whole);
        assert.ok(copied <= input.length, `copied ${copied} bytes of ${input.length}`);
        const dataBytes = whole.events.reduce((n, e) => n + Buffer.byteLength(e.data), 0);
        assert.ok(dataBytes <= input.length);
      }),
    );
  });

  it('events written by the rules come back exactly (data byte for byte), whatever the line ends and cuts', () => {
    fuzz(
      'sse: round trip',
      fc.property(fc.array(sseEvent, { maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\r'), cuts(512), (events, eol, at) => {
        const got = decodeSse(cutAt(encodeSse(events, eol), at)).events;
        assert.deepEqual(got, events.map(dropUndefined));
      }),
    );
  });
});

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
