/** W3C trace context helpers and the injection minter. */
import { describe, expect, it } from 'vitest';
import { TraceFlags } from '@opentelemetry/api';
import { formatTraceContext, metaTraceCarrier, parseTraceContext, withTraceContext } from '../../src/telemetry/trace-context.js';
import { TraceContextMinter } from '../../src/telemetry/trace-context-minter.js';
import { PresetIdGenerator } from '../../src/telemetry/span-data.js';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('trace context', () => {
  it('parses and formats traceparent/tracestate, rejecting invalid ones', () => {
    const sc = parseTraceContext({ traceparent: TP, tracestate: 'a=1' })!;
    expect(sc).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
    expect(formatTraceContext(sc)).toEqual({ traceparent: TP, tracestate: 'a=1' });
    for (const bad of ['', 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01']) {
      expect(parseTraceContext({ traceparent: bad })).toBeUndefined();
    }
    expect(parseTraceContext({})).toBeUndefined();
  });

  it('reads _meta and writes it back without touching other params or _meta keys', () => {
    const req = {
      jsonrpc: '2.0' as const,
      id: 1,
      method: 'tools/call',
      params: { name: 'x', _meta: { progressToken: 7, traceparent: 'old', tracestate: 'old=1' } },
    };
    expect(metaTraceCarrier(req)).toEqual({ traceparent: 'old', tracestate: 'old=1' });
    const out = withTraceContext(req, { traceparent: TP });
    expect(out.params).toEqual({ name: 'x', _meta: { progressToken: 7, traceparent: TP } });
    expect(req.params._meta.traceparent).toBe('old');
    expect(withTraceContext({ jsonrpc: '2.0', id: 2, method: 'm' }, { traceparent: TP }).params).toEqual({ _meta: { traceparent: TP } });
    const positional = { jsonrpc: '2.0' as const, id: 3, method: 'm', params: [1, 2] };
    expect(withTraceContext(positional, { traceparent: TP })).toBe(positional);
  });
});

describe('TraceContextMinter', () => {
  it('mints a child of the caller context, or a sampled root, and hands it over once', () => {
    const m = new TraceContextMinter();
    const child = m.mint('c', 'c2s', 1, { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { traceparent: TP } } });
    expect(child.spanContext.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child.spanContext.spanId).not.toBe('00f067aa0ba902b7');
    expect(child.parent?.spanId).toBe('00f067aa0ba902b7');
    expect(child.carrier.traceparent).toBe(`00-${child.spanContext.traceId}-${child.spanContext.spanId}-01`);
    const root = m.mint('c', 'c2s', '1');
    expect(root.parent).toBeUndefined();
    expect(root.spanContext.traceFlags).toBe(TraceFlags.SAMPLED);
    expect(m.take('c', 'c2s', 1)).toBe(child);
    expect(m.take('c', 'c2s', 1)).toBeUndefined();
    expect(m.take('c', 's2c', '1')).toBeUndefined();
    expect(m.take('c', 'c2s', '1')).toBe(root);
  });

  it('is bounded: the oldest unclaimed contexts are evicted and counted', () => {
    const m = new TraceContextMinter({ maxPending: 3 });
    for (let i = 0; i < 10; i++) m.mint('c', 'c2s', i);
    expect(m.size).toBe(3);
    expect(m.evicted).toBe(7);
    expect(m.take('c', 'c2s', 0)).toBeUndefined();
    expect(m.take('c', 'c2s', 9)).toBeDefined();
  });

  it('inject() rewrites the request; positional params are left alone and nothing is minted', () => {
    const m = new TraceContextMinter();
    const out = m.inject('c', 'c2s', { jsonrpc: '2.0', id: 5, method: 'tools/list' });
    const tp = (out.params as { _meta: { traceparent: string } })._meta.traceparent;
    expect(tp).toBe(m.take('c', 'c2s', 5)!.carrier.traceparent);
    const positional = { jsonrpc: '2.0' as const, id: 6, method: 'm', params: [] };
    expect(m.inject('c', 'c2s', positional)).toBe(positional);
    expect(m.size).toBe(0);
  });
});

describe('PresetIdGenerator', () => {
  it('returns preset ids for exactly one span, random ids otherwise', () => {
    const g = new PresetIdGenerator();
    const ids = g.withIds({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) }, () => [g.generateSpanId(), g.generateTraceId(), g.generateSpanId()]);
    expect(ids[0]).toBe('b'.repeat(16));
    expect(ids[1]).toBe('a'.repeat(32));
    expect(ids[2]).toMatch(/^[0-9a-f]{16}$/);
    expect(ids[2]).not.toBe('b'.repeat(16));
    expect(g.generateTraceId()).not.toBe('a'.repeat(32));
  });
});
