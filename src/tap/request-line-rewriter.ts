/**
 * Splits a newline-delimited JSON-RPC byte stream into lines and rewrites the lines that hold a
 * request (or a batch with requests), for `--inject-trace-context`. Used only in that mode: the
 * default stdio path forwards chunks untouched.
 *
 * Invariants:
 * - The output, concatenated, equals the input except for rewritten request lines; every other
 *   line (notifications, responses, non-JSON, invalid UTF-8, over-long) goes out byte for byte.
 * - A rewritten line is `JSON.stringify` of the rewritten message plus the original terminator
 *   (`\n` or `\r\n`): whitespace and number spelling inside that line may change, ids do not (a
 *   numeric id that would not survive a JS number round trip leaves the line unchanged).
 * - Memory is bounded: a partial line longer than `maxLineBytes` is forwarded as it arrives and
 *   the rest of that line is not rewritten.
 * - Never throws: a failing rewrite leaves the line unchanged.
 */
import { classifyMessage, type JsonRpcRequest } from '../model/jsonrpc.js';

export type RewriteRequest = (request: JsonRpcRequest) => JsonRpcRequest;

export interface RequestLineRewriterOptions {
  /** Longest line held back for rewriting. Default 64 MiB. */
  maxLineBytes?: number;
}

const NL = 0x0a;
const CR = 0x0d;
const REPLACEMENT = Buffer.from('\uFFFD');

export class RequestLineRewriter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Inside an over-long line: pass bytes through until its newline. */
  private passing = false;
  private readonly maxLineBytes: number;
  private rewrittenCount = 0;

  constructor(
    private readonly rewrite: RewriteRequest,
    opts: RequestLineRewriterOptions = {},
  ) {
    this.maxLineBytes = opts.maxLineBytes ?? 64 * 1024 * 1024;
  }

  /** Lines rewritten so far. */
  get rewritten(): number {
    return this.rewrittenCount;
  }

  /** The bytes to forward now, in order (complete lines; a partial line is held back). */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(NL); nl !== -1; nl = chunk.indexOf(NL, from)) {
      const piece = chunk.subarray(from, nl + 1);
      from = nl + 1;
      if (this.passing) {
        this.passing = false;
        out.push(piece);
        continue;
      }
      const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece], this.pendingBytes + piece.length);
      this.pending = [];
      this.pendingBytes = 0;
      out.push(this.rewriteLine(line));
    }
    if (from < chunk.length) this.hold(chunk.subarray(from), out);
    return out;
  }

  /** End of input: the unterminated last line, unchanged. */
  end(): Buffer[] {
    const rest = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    return rest;
  }

  private hold(part: Buffer, out: Buffer[]): void {
    if (this.passing) return void out.push(part);
    this.pending.push(part);
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.maxLineBytes) {
      out.push(...this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      this.passing = true;
    }
  }

  private rewriteLine(line: Buffer): Buffer {
    try {
      const termLen = line.length >= 2 && line[line.length - 2] === CR ? 2 : 1;
      const body = line.subarray(0, line.length - termLen);
      const text = body.toString('utf8');
      // Invalid UTF-8 would come back as U+FFFD: such a line must pass untouched.
      if (text.includes('\uFFFD') && !body.includes(REPLACEMENT)) return line;
      const first = text.trimStart()[0];
      if (first !== '{' && first !== '[') return line;
      const next = this.rewriteValue(JSON.parse(text) as unknown, text);
      if (next === undefined) return line;
      this.rewrittenCount++;
      return Buffer.from(JSON.stringify(next) + (termLen === 2 ? '\r\n' : '\n'), 'utf8');
    } catch {
      return line;
    }
  }

  /** The rewritten message or batch; undefined when nothing in it is a rewritable request. */
  private rewriteValue(value: unknown, text: string): unknown {
    if (!Array.isArray(value)) return this.rewriteOne(value, text);
    let changed = false;
    const batch = value.map((item) => {
      const next = this.rewriteOne(item, text);
      if (next === undefined) return item;
      changed = true;
      return next;
    });
    return changed ? batch : undefined;
  }

  private rewriteOne(value: unknown, text: string): JsonRpcRequest | undefined {
    if (classifyMessage(value) !== 'request') return undefined;
    const req = value as JsonRpcRequest;
    if (typeof req.id === 'number' && !numericIdSurvives(req.id, text)) return undefined;
    const next = this.rewrite(req);
    return next === req ? undefined : next;
  }
}

/**
 * A numeric id survives re-serialization only when it is a safe integer spelled the way
 * JSON.stringify spells it: 2^53 and beyond, `1.0`, `1e2` or `-0` would change on the wire.
 */
function numericIdSurvives(id: number, text: string): boolean {
  if (!Number.isSafeInteger(id)) return false;
  return new RegExp(`"id"\\s*:\\s*${String(id)}\\s*[,}\\]]`).test(text);
}
