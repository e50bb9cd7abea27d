/**
 * Span and trace ids derived from a per-run seed (stored in the recording's meta) and what a recording keeps (exchange keys, connection ids, open
 * times), so `mcptap export` reproduces the live ids. The seed is random because exchange keys (`stdio/c2s/12`) repeat in every run: a backend would
 * merge unrelated traces. Invariants: lower-case hex of the W3C lengths, never all zeros; same (seed, name), same ids; other names, unrelated ids (SHA-256).
 */
import * as nodeCrypto from 'node:crypto';
import type { SpanContext } from '@opentelemetry/api';

export type SpanIds = Pick<SpanContext, 'traceId' | 'spanId'>;

export class SeededSpanIds {
  /** `${seed}\0exchange\0`: the hashed text of an exchange is this plus its key (one concatenation per span). */
  private readonly exchangePrefix: string;

  constructor(readonly seed: string) {
    this.exchangePrefix = `${seed}\u0000exchange\u0000`;
  }

  /** A fresh random seed (128 bits, hex) for a live run. */
  static randomSeed(): string {
    return nodeCrypto.randomBytes(16).toString('hex');
  }

  /** Ids of an exchange span; `exchangeKey` is unique within the run (see Exchange.key). */
  exchange(exchangeKey: string): SpanIds {
    return idsOf(sha256Hex(this.exchangePrefix + exchangeKey));
  }

  /** Ids of a connection's `mcp.session` span; the open time tells a reused connection id apart. */
  session(connectionId: string, openedUs: number): SpanIds {
    return idsOf(sha256Hex(`${this.seed}\u0000session\u0000${connectionId}\u0000${openedUs}`));
  }
}

function idsOf(digest: string): SpanIds {
  return { traceId: nonZero(digest.slice(0, 32)), spanId: nonZero(digest.slice(32, 48)) };
}

/** One-shot `crypto.hash` (Node >= 20.12), cheaper than createHash per span (performance.md, "Figures moved from source comments"); old Node 20 lacks it. */
const sha256Hex: (text: string) => string =
  typeof nodeCrypto.hash === 'function'
    ? (text) => nodeCrypto.hash('sha256', text, 'hex')
    : (text) => nodeCrypto.createHash('sha256').update(text).digest('hex');

/** An all-zero id is invalid in W3C trace context (odds 2^-64, but the invariant is cheap). */
function nonZero(hex: string): string {
  // Almost every id has a non-zero first digit: skip the full check then.
  return hex.charCodeAt(0) === 48 && /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}
