/**
 * `--inject-trace-context`: the tap mints an exchange span's ids at request time and writes them into `params._meta.traceparent` before forwarding;
 * the span sink `take`s them for its span, so the server's span is its child, and it a child of the caller's context. Entries are keyed like the
 * correlator's pending table and bounded (oldest evicted first). Sampling is decided here with the tracer's sampler, so the injected flags say what
 * the tap will do; the spec's samplers are deterministic, so the tracer later agrees.
 */
import { randomBytes } from 'node:crypto';
import type { SpanContext } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import type { Direction } from '../model/frame.js';
import { idKey, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from '../model/jsonrpc.js';
import { decide, formatTraceContext, metaTraceCarrier, parseTraceContext, samplerFor, withTraceContext, type TraceCarrier } from './trace-context.js';

export interface MintedTraceContext {
  /** The exchange span's own context: these ids are what was injected. */
  spanContext: SpanContext;
  /** The caller's context the request carried before injection: the exchange span's parent. */
  parent?: SpanContext;
  /** What to write into `params._meta`. */
  carrier: TraceCarrier;
}

export interface TraceContextMinterOptions {
  /** Minted contexts kept until the sink takes them. Default 10,000. */
  maxPending?: number;
  /** Source of random bytes (tests may make ids deterministic). */
  random?: (size: number) => Buffer;
  /** The tracer's sampler. Default: the SDK's default, parent-based always-on. */
  sampler?: Sampler;
}

export class TraceContextMinter {
  private readonly pending = new Map<string, MintedTraceContext>();
  private readonly maxPending: number;
  private readonly random: (size: number) => Buffer;
  private readonly sampler: Sampler;
  /** Minted contexts evicted unused because the table was full. */
  evicted = 0;

  constructor(opts: TraceContextMinterOptions = {}) {
    this.maxPending = Math.max(1, opts.maxPending ?? 10_000);
    this.random = opts.random ?? randomBytes;
    this.sampler = opts.sampler ?? samplerFor(undefined);
  }

  /** Mint the context for a request about to be forwarded; `request` supplies the caller's parent. */
  mint(connectionId: string, direction: Direction, id: JsonRpcId, request?: JsonRpcMessage): MintedTraceContext {
    const parent = request ? parseTraceContext(metaTraceCarrier(request)) : undefined;
    const traceId = parent?.traceId ?? this.hexId(16);
    const method = request && 'method' in request ? request.method : '';
    // As the span sink will decide.
    const spanContext = decide(this.sampler, method, parent, { traceId, spanId: this.hexId(8) }).context;
    const minted: MintedTraceContext = { spanContext, carrier: formatTraceContext(spanContext), ...(parent ? { parent } : {}) };
    const key = keyOf(connectionId, direction, id);
    this.pending.delete(key);
    this.pending.set(key, minted);
    if (this.pending.size > this.maxPending) {
      this.pending.delete(this.pending.keys().next().value as string);
      this.evicted++;
    }
    return minted;
  }

  /** Mint and return the request with its new `_meta.traceparent` (positional params: unchanged, nothing minted). */
  inject(connectionId: string, direction: Direction, request: JsonRpcRequest): JsonRpcRequest {
    if (Array.isArray(request.params)) return request;
    const minted = this.mint(connectionId, direction, request.id, request);
    return withTraceContext(request, minted.carrier);
  }

  /** The context minted for this request, removed from the table; undefined when none was minted. */
  take(connectionId: string, direction: Direction, id: JsonRpcId): MintedTraceContext | undefined {
    const key = keyOf(connectionId, direction, id);
    const minted = this.pending.get(key);
    if (minted) this.pending.delete(key);
    return minted;
  }

  get size(): number {
    return this.pending.size;
  }

  private hexId(bytes: number): string {
    // An all-zero id is invalid in W3C trace context; retry (bounded: the odds are 2^-64 per try).
    for (let i = 0; i < 4; i++) {
      const hex = this.random(bytes).toString('hex');
      if (!/^0+$/.test(hex)) return hex;
    }
    return '0'.repeat(bytes * 2 - 1) + '1';
  }
}

function keyOf(connectionId: string, direction: Direction, id: JsonRpcId): string {
  return `${connectionId}|${direction}|${idKey(id)}`;
}
