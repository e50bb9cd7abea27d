/**
 * An IdGenerator of one TracerProvider (not global): ids decided up front for exactly one span, random otherwise. Invariant: a preset is consumed by
 * the very next `startSpan`, because `withIds` sets it, starts the span synchronously and clears it in `finally`.
 */
import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base';

export class PresetIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private traceId: string | undefined;
  private spanId: string | undefined;

  generateTraceId(): string {
    const id = this.traceId;
    this.traceId = undefined;
    return id ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    const id = this.spanId;
    this.spanId = undefined;
    return id ?? this.random.generateSpanId();
  }

  /** Run `start` (which must start exactly one span synchronously) with these ids preset. */
  withIds<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
    try {
      return start();
    } finally {
      this.traceId = undefined;
      this.spanId = undefined;
    }
  }
}
