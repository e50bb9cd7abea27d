/**
 * createOtlpProtoSpanExporter (the SDK exporter's own parts, its answer read for partial successes)
 * against the SDK's OTLPTraceExporter: the same spans sent to a collector stand-in (node:http on
 * 127.0.0.1) arrive as the same request, path, content type, configured headers and body bytes; a
 * refused export is reported as failed by both.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createOtlpProtoSpanExporter } from '../../src/telemetry/otlp-proto-span-exporter.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const received: Received[] = [];
let status = 200;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(status, { 'content-type': 'application/x-protobuf' }).end();
  });
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function someSpans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'exporter-test' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('mcptap', '1.0.0');
  for (let i = 0; i < 20; i++) {
    const s = tracer.startSpan(
      `tools/call echo ${i}`,
      { kind: SpanKind.CLIENT, startTime: [1_767_225_600 + i, 0], attributes: { 'mcp.method.name': 'tools/call', i, é: 'ü' } },
      ROOT_CONTEXT,
    );
    s.addEvent('mcp.progress', { 'mcp.progress.progress': i }, [1_767_225_600 + i, 1000]);
    s.setStatus({ code: i % 2 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET, message: 'boom' });
    s.end([1_767_225_601 + i, 0]);
  }
  return memory.getFinishedSpans();
}

async function send(exporter: SpanExporter, spans: ReadableSpan[]): Promise<{ result: ExportResult; request: Received }> {
  const before = received.length;
  const result = await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  await exporter.shutdown();
  expect(received.length).toBe(before + 1);
  return { result, request: received[received.length - 1]! };
}

describe('createOtlpProtoSpanExporter', () => {
  it('sends what the SDK protobuf exporter sends', async () => {
    const spans = someSpans();
    const config = () => ({ url, headers: { 'x-tenant': 'acme' }, timeoutMillis: 5000 });
    const sdk = await send(new OTLPTraceExporter(config()), spans);
    const ours = await send(createOtlpProtoSpanExporter(config()), spans);
    expect(ours.result.code).toBe(ExportResultCode.SUCCESS);
    expect(sdk.result.code).toBe(ExportResultCode.SUCCESS);
    expect(ours.request.path).toBe('/v1/traces');
    expect(ours.request.headers['content-type']).toBe(sdk.request.headers['content-type']);
    expect(ours.request.headers['x-tenant']).toBe('acme');
    expect(ours.request.headers['user-agent']).toBe(sdk.request.headers['user-agent']);
    expect(ours.request.body.length).toBeGreaterThan(1000);
    expect(ours.request.body.equals(sdk.request.body)).toBe(true);
  });

  it('reports a refused export as failed, as the SDK exporter does', async () => {
    status = 400;
    try {
      const spans = someSpans().slice(0, 2);
      const ours = await send(createOtlpProtoSpanExporter({ url, timeoutMillis: 5000 }), spans);
      const sdk = await send(new OTLPTraceExporter({ url, timeoutMillis: 5000 }), spans);
      expect(ours.result.code).toBe(ExportResultCode.FAILED);
      expect(sdk.result.code).toBe(ExportResultCode.FAILED);
    } finally {
      status = 200;
    }
  });
});
