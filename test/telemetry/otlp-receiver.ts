/**
 * An OTLP/HTTP receiver inside the test process (node:http on 127.0.0.1:0), standing in for an
 * OpenTelemetry Collector. It decodes http/json trace exports into flat span records and keeps
 * the raw request metadata of every export (path, content type) so protobuf exports can be seen
 * arriving too. `failNext` makes it answer the next N exports with HTTP 500 (a collector outage).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type AttrValue = string | number | boolean | AttrValue[] | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP enum: 1 internal, 2 server, 3 client. */
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, AttrValue>;
  events: { name: string; timeUnixNano: bigint; attributes: Record<string, AttrValue> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, AttrValue> }[];
  /** OTLP enum: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  resource: Record<string, AttrValue>;
}

export interface ExportRequest {
  path: string;
  contentType: string;
  bytes: number;
  headers: Record<string, string | string[] | undefined>;
}

export interface OtlpReceiver {
  /** Base URL, e.g. http://127.0.0.1:41234 (exporters append /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Raw bodies of /v1/metrics exports (JSON text). */
  metricBodies: string[];
  requests: ExportRequest[];
  failNext: number;
  /** Resolves once at least `n` spans arrived; rejects after `timeoutMs`. */
  waitForSpans(n: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonAnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: JsonAnyValue[] };
}

function anyValue(v: JsonAnyValue): AttrValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  return undefined;
}

export function attrs(list: JsonKeyValue[] | undefined): Record<string, AttrValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

/* eslint-disable @typescript-eslint/no-explicit-any */
function decodeTraces(body: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
          name: s.name,
          kind: s.kind,
          startTimeUnixNano: BigInt(s.startTimeUnixNano),
          endTimeUnixNano: BigInt(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, timeUnixNano: BigInt(e.timeUnixNano), attributes: attrs(e.attributes) })),
          links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId, attributes: attrs(l.attributes) })),
          status: { code: s.status?.code ?? 0, ...(s.status?.message ? { message: s.status.message } : {}) },
          resource,
        });
      }
    }
  }
  return out;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const waiters = new Set<() => void>();
  const receiver = { spans: [] as ReceivedSpan[], metricBodies: [] as string[], requests: [] as ExportRequest[], failNext: 0 };
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const path = req.url ?? '/';
      const contentType = String(req.headers['content-type'] ?? '');
      receiver.requests.push({ path, contentType, bytes: body.length, headers: req.headers });
      if (receiver.failNext > 0) {
        receiver.failNext--;
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"code":13,"message":"collector down (test)"}');
        return;
      }
      if (contentType.startsWith('application/json')) {
        if (path === '/v1/traces') receiver.spans.push(...decodeTraces(JSON.parse(body.toString('utf8'))));
        if (path === '/v1/metrics') receiver.metricBodies.push(body.toString('utf8'));
      }
      res.writeHead(200, { 'content-type': contentType || 'application/json' }).end(contentType.startsWith('application/json') ? '{}' : '');
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    waitForSpans(n: number, timeoutMs = 5000): Promise<ReceivedSpan[]> {
      return new Promise<ReceivedSpan[]>((resolve, reject) => {
        const check = () => {
          if (receiver.spans.length < n) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(receiver.spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${n} spans, received ${receiver.spans.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close(): Promise<void> {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
