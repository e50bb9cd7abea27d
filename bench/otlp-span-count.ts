/**
 * A counting OTLP/HTTP endpoint for the benchmarks: it decodes every trace export (protobuf or
 * JSON, gzip or not) just far enough to count its spans by name. The protobuf walk reads only the
 * length-delimited fields on the path to a span's name.
 *
 * The benchmarks run it in a process of its own ({@link countingOtlpProcess}), decoding only when
 * asked for the tally: in the process that drives the load, decoding an export (512 spans, some
 * 300 KB) stalled the load generator's event loop for milliseconds, and its CPU was counted as the
 * measured code's; decoding as exports arrive competes with the measured processes for the CPU.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { stopChild } from './bench-util.js';

/** Spans an OTLP endpoint received, by kind: exchange spans and `mcp.session` spans. */
export interface SpanTally {
  exchange: number;
  session: number;
  /** Export bodies that could not be decoded (counted, not fatal). */
  undecoded: number;
}

/**
 * An OTLP/HTTP endpoint that counts the spans of every trace export (protobuf or JSON, gzip or
 * not) by name. Receiving costs little while a benchmark runs: exports are kept as they came and
 * decoded when `tally()` is called (which counts every export received so far, then lets it go).
 */
export async function countingOtlp(): Promise<{ url: string; server: Server; counts: { requests: number; bytes: number }; tally(): SpanTally }> {
  const counts = { requests: 0, bytes: 0 };
  const spans: SpanTally = { exchange: 0, session: 0, undecoded: 0 };
  const pending: Array<[Buffer, Record<string, string | string[] | undefined>]> = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => {
      counts.bytes += b.length;
      parts.push(b);
    });
    req.on('end', () => {
      counts.requests++;
      if (req.url?.endsWith('/v1/traces')) pending.push([Buffer.concat(parts), req.headers]);
      res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/json') }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const tally = () => {
    for (const [body, headers] of pending.splice(0)) tallySpans(body, headers, spans);
    return { ...spans };
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, counts, tally };
}

function tallySpans(body: Buffer, headers: Record<string, string | string[] | undefined>, into: SpanTally): void {
  try {
    const raw = headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
    const names = String(headers['content-type']).includes('json') ? jsonSpanNames(raw) : protoSpanNames(raw);
    for (const name of names) name === 'mcp.session' ? into.session++ : into.exchange++;
  } catch {
    into.undecoded++;
  }
}

function jsonSpanNames(raw: Buffer): string[] {
  const req = JSON.parse(raw.toString('utf8')) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<{ name: string }> }> }> };
  return (req.resourceSpans ?? []).flatMap((rs) => (rs.scopeSpans ?? []).flatMap((ss) => (ss.spans ?? []).map((sp) => sp.name)));
}

/** Span names of an ExportTraceServiceRequest: resource_spans (1) > scope_spans (2) > spans (2) > name (5). */
function protoSpanNames(buf: Buffer): string[] {
  const names: string[] = [];
  for (const rs of lenFields(buf, 0, buf.length, 1)) {
    for (const ss of lenFields(buf, rs[0], rs[1], 2)) {
      for (const sp of lenFields(buf, ss[0], ss[1], 2)) {
        const name = lenFields(buf, sp[0], sp[1], 5)[0];
        names.push(name ? buf.toString('utf8', name[0], name[1]) : '');
      }
    }
  }
  return names;
}

/** [start, end) of every length-delimited field `field` in buf[from, to); other fields skipped by wire type. */
function lenFields(buf: Buffer, from: number, to: number, field: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let p = from;
  const varint = (): number => {
    let v = 0;
    for (let shift = 1; ; shift *= 128) {
      if (p >= to) throw new Error('truncated varint');
      const b = buf[p++]!;
      v += (b & 0x7f) * shift;
      if (b < 0x80) return v;
    }
  };
  while (p < to) {
    const key = varint();
    const wire = key % 8;
    if (wire === 0) varint();
    else if (wire === 1) p += 8;
    else if (wire === 5) p += 4;
    else if (wire === 2) {
      const len = varint();
      if (Math.floor(key / 8) === field) out.push([p, p + len]);
      p += len;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  if (p !== to) throw new Error('field runs past its message');
  return out;
}

/** What a counting endpoint received so far. */
export interface OtlpTally {
  requests: number;
  bytes: number;
  spans: SpanTally;
}

export interface CountingOtlpProcess {
  url: string;
  pid: number | undefined;
  /** What the endpoint received so far (asks the child). */
  tally(): Promise<OtlpTally>;
  stop(): Promise<void>;
}

/**
 * {@link countingOtlp} in a child process (this file is its entry): the URL comes back on the
 * child's first stdout line, each `tally` line on its stdin is answered with one JSON line, and
 * the child leaves when its stdin ends.
 */
export async function countingOtlpProcess(): Promise<CountingOtlpProcess> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the counting OTLP endpoint exited (code ${code})`));
      child.once('exit', onExit);
      waiting.push((line) => {
        child.off('exit', onExit);
        resolve(line);
      });
    });
  const url = (JSON.parse(await next()) as { url: string }).url;
  return {
    url,
    pid: child.pid,
    async tally() {
      const answer = next();
      child.stdin!.write('tally\n');
      return JSON.parse(await answer) as OtlpTally;
    },
    stop: () => stopChild(child),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--serve') {
  const otlp = await countingOtlp();
  process.stdout.write(JSON.stringify({ url: otlp.url }) + '\n');
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      if (line.trim() === 'tally') process.stdout.write(JSON.stringify({ ...otlp.counts, spans: otlp.tally() } satisfies OtlpTally) + '\n');
    })
    .on('close', () => {
      otlp.server.closeAllConnections();
      otlp.server.close(() => process.exit(0));
    });
}
