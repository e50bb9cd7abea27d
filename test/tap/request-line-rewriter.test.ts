/**
 * RequestLineRewriter (the `--inject-trace-context` line splitter): requests are rewritten, every
 * other line passes byte for byte, however the input is cut.
 */
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/model/jsonrpc.js';
import { RequestLineRewriter } from '../../src/tap/request-line-rewriter.js';

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const mark = (req: JsonRpcRequest): JsonRpcRequest => ({ ...req, params: { ...(req.params as object), _meta: { traceparent: TP } } });

function run(input: Buffer, cuts: number[], opts = {}): { out: Buffer; rewriter: RequestLineRewriter } {
  const rewriter = new RequestLineRewriter(mark, opts);
  const parts: Buffer[] = [];
  let pos = 0;
  for (const c of [...cuts, input.length]) {
    parts.push(...rewriter.push(input.subarray(pos, Math.max(pos, c))));
    pos = Math.max(pos, c);
  }
  parts.push(...rewriter.end());
  return { out: Buffer.concat(parts), rewriter };
}

const lines = [
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"t":"ünï 🎉"}}}\n',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
  '{"jsonrpc":"2.0","id":"s1","result":{}}\r\n',
  'not json ✓\n',
  '{"jsonrpc":"2.0","id":"a","method":"tools/list"}\r\n',
  '{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/list"}\n',
  '{"jsonrpc":"2.0","id":1e2,"method":"tools/list"}\n',
  '{"jsonrpc":"2.0","id":7,"method":"x","params":[1,2]}\n',
  '[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]\n',
  '{"jsonrpc":"2.0","id":9,"method":"tools/list"}',
];

const expected = [
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"t":"ünï 🎉"},"_meta":{"traceparent":"${TP}"}}}\n`,
  lines[1],
  lines[2],
  lines[3],
  `{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"traceparent":"${TP}"}}}\r\n`,
  lines[5], // would lose digits
  lines[6], // would be respelled 100
  lines[7], // positional params: nothing to add _meta to (the rewrite function returns it unchanged)
  `[{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":{"traceparent":"${TP}"}}},{"jsonrpc":"2.0","method":"n"}]\n`,
  lines[9], // unterminated at the end: forwarded as is
].join('');

describe('RequestLineRewriter', () => {
  const input = Buffer.from(lines.join(''));
  // The rewrite function of the real tap leaves positional params alone; this one must as well.
  const positionalSafe = (req: JsonRpcRequest) => (Array.isArray(req.params) ? req : mark(req));

  it('rewrites requests and passes everything else byte for byte', () => {
    const rewriter = new RequestLineRewriter(positionalSafe);
    const out = Buffer.concat([...rewriter.push(input), ...rewriter.end()]);
    expect(out.toString('utf8')).toBe(expected);
    expect(rewriter.rewritten).toBe(3);
  });

  it('gives the same bytes however the input is cut (every single cut point, and 1-byte chunks)', () => {
    for (let cut = 0; cut <= input.length; cut++) {
      const rewriter = new RequestLineRewriter(positionalSafe);
      const out = Buffer.concat([...rewriter.push(input.subarray(0, cut)), ...rewriter.push(input.subarray(cut)), ...rewriter.end()]);
      expect(out.toString('utf8'), `cut at ${cut}`).toBe(expected);
    }
    const rewriter = new RequestLineRewriter(positionalSafe);
    const parts: Buffer[] = [];
    for (let i = 0; i < input.length; i++) parts.push(...rewriter.push(input.subarray(i, i + 1)));
    expect(Buffer.concat([...parts, ...rewriter.end()]).toString('utf8')).toBe(expected);
  });

  it('forwards a line with invalid UTF-8 unchanged', () => {
    const bad = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')]);
    expect(run(bad, [5]).out.equals(bad)).toBe(true);
  });

  it('passes an over-long line through as it arrives (bounded memory) and resumes after its newline', () => {
    const long = `{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"${'x'.repeat(200)}"}}\n`;
    const next = '{"jsonrpc":"2.0","id":2,"method":"m"}\n';
    const input2 = Buffer.from(long + next);
    const { out, rewriter } = run(input2, [50, 120, 180], { maxLineBytes: 100 });
    expect(out.toString()).toBe(long + `{"jsonrpc":"2.0","id":2,"method":"m","params":{"_meta":{"traceparent":"${TP}"}}}\n`);
    expect(rewriter.rewritten).toBe(1);
  });

  it('leaves a line unchanged when the rewrite throws', () => {
    const rewriter = new RequestLineRewriter(() => {
      throw new Error('boom');
    });
    const line = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"m"}\n');
    expect(Buffer.concat(rewriter.push(line)).equals(line)).toBe(true);
  });
});
