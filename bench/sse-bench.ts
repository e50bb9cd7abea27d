/**
 * `npm run bench -- sse`: SSE timing accuracy and long-lived streams through the HTTP tap.
 *
 * 1. Time-to-first-event accuracy: the reference server's `progress` tool sends its first event
 *    `intervalMs` after the call starts (the known delay, 1 s). 100 concurrent streams (open
 *    model, 100 arrivals within 1 s, each held 1 s). The server stamps when each request reached
 *    its HTTP layer and when it sent the first event; the load engine's first-event time and the
 *    tap recording's (first event - request seen), minus that actual server time, must be within
 *    2 ms at p99 (mcptap's error plus the loopback transits), read from the median of 5 rounds, with
 *    a bare node:http client's figure in the same rounds as the floor.
 * 2. Listen: 100 `subscriptions/listen` streams (and legacy GET streams), direct and through the
 *    tap, while the reference server's `trigger` tool fires every 100 ms: each notification counted
 *    once on every stream, delivery delay from the server's firing stamp.
 * 3. Scale: 1,000 concurrent SSE streams (progress every 500 ms for 60 s) through
 *    `mcptap http --record`: the tap's peak RSS and its growth over the last 30 s, the longest gap
 *    between events against the server's 500 ms, and every event found in the recording.
 * Options (env): SSE_BENCH_PARTS (ttfe,listen,scale), SSE_BENCH_ROUNDS (5, of part 1), SSE_BENCH_STREAMS (1000),
 * SSE_BENCH_SECONDS (60).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadYaml } from '../src/load/scenario/scenario-loader.js';
import { runLoad } from '../src/load/run/run-load.js';
import { startTarget } from '../src/load/target/target-runtime.js';
import type { LoadResult } from '../src/load/results/load-result.js';
import type { CallRecord } from '../src/load/drivers/driver.js';
import { RecordingStore } from '../src/store/recording-store.js';
import { PROGRESS_ARRIVED_META, PROGRESS_SENT_META, PROGRESS_STARTED_META } from '../src/reference/reference-server.js';
import { HttpChannel } from '../src/client/mcp-channel.js';
import { McpSession } from '../src/client/mcp-session.js';
import { request as httpRequest, Agent } from 'node:http';
import { systemClock } from '../src/util/clock.js';
import { ECHO_CALL_HEADERS, listeningUrl, MCPTAP, percentile, stopChild, table } from './bench-util.js';

const TTFE_DELAY_MS = 1000;

interface Tap {
  child: ChildProcess;
  url: string;
}

async function startTap(upstream: string, record: string): Promise<Tap> {
  const child = spawn(process.execPath, [MCPTAP, 'http', '--upstream', upstream, '--listen', '127.0.0.1:0', '--record', record], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return { child, url: await listeningUrl(child) };
}

/** SIGINT, then wait for the recording to be flushed (up to 2 min: a big one takes a while). */
const stopTapAndRecording = (child: ChildProcess) => stopChild(child, 'SIGINT', 120_000);

/** Resident set size of a process, bytes (Linux /proc); NaN once it is gone. */
function rssBytes(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

function scenarioFor(url: string, phase: string, args: string, timeout = '30s'): ReturnType<typeof loadYaml> {
  return loadYaml(
    `
name: sse-bench
target: { url: "${url}", connections: 2000 }
era: 2026-07-28
timeout: ${timeout}
phases: [ ${phase} ]
steps: [ { tool: progress, arguments: ${args}, progress: true } ]
`,
    { source: 'sse-bench.yaml', baseDir: process.cwd() },
  );
}

/** First-event delay of every recorded tools/call (first event seen - request seen), µs. */
function recordedFirstEventsUs(file: string, intervalMs?: number): { ttfe: number[]; events: number; progress: number; calls: number } {
  const calls = recordedCalls(file, intervalMs);
  const ttfe = calls.flatMap((e) => (e.transport?.firstEventUs !== undefined ? [e.transport.firstEventUs - e.startUs] : []));
  const events = calls.reduce((a, e) => a + (e.transport?.eventTimesUs?.length ?? 0), 0);
  const progress = calls.reduce((a, e) => a + e.progress.length, 0);
  return { ttfe, events, progress, calls: calls.length };
}

function recordedCalls(file: string, intervalMs?: number) {
  const store = RecordingStore.open(file);
  try {
    const all = store.exchanges({ method: 'tools/call' });
    return intervalMs === undefined
      ? all
      : all.filter((e) => (e.request as { params?: { arguments?: { intervalMs?: number } } }).params?.arguments?.intervalMs === intervalMs);
  } finally {
    store.close();
  }
}

const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`;

/** One stream as the load engine saw it, with the reference server's own stamps from its first progress event. */
interface Stream {
  token: string;
  sentUs: number;
  firstEventUs: number;
  /** When the request reached the server's HTTP layer, its tool call started, and it sent the first event (its _meta, epoch µs). */
  arrivedAtUs: number;
  startedAtUs: number;
  serverSentUs: number;
}

function streamOf(rec: CallRecord): Stream | undefined {
  const s = rec.sample;
  const first = rec.result?.messages.find((m) => (m as { method?: string }).method === 'notifications/progress') as
    { params: { progressToken: string | number; _meta?: Record<string, number> } } | undefined;
  const meta = first?.params._meta;
  if (first === undefined || s.firstEventUs === undefined || !meta?.[PROGRESS_STARTED_META] || !meta[PROGRESS_SENT_META] || !meta[PROGRESS_ARRIVED_META])
    return undefined;
  return {
    token: String(first.params.progressToken),
    sentUs: s.sentUs,
    firstEventUs: s.firstEventUs,
    arrivedAtUs: meta[PROGRESS_ARRIVED_META],
    startedAtUs: meta[PROGRESS_STARTED_META],
    serverSentUs: meta[PROGRESS_SENT_META],
  };
}

/**
 * The same streams from a bare `node:http` client that stamps its write and the first chunk and
 * does nothing else: its "measured - server's actual" is the machine's loopback transit and
 * scheduling, the floor under any client's figure; mcptap's own error is what it adds above it.
 */
async function bareClientStreams(url: string, n: number, overMs: number, warm: number): Promise<Stream[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: warm + 10 });
  const one = (i: number, intervalMs: number): Promise<Stream | undefined> =>
    new Promise((resolve) => {
      const token = `bare-${i}-${intervalMs}`;
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: {
          name: 'progress',
          arguments: { steps: 1, intervalMs },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, progressToken: token },
        },
      });
      const req = httpRequest(url, { method: 'POST', agent, headers: { ...ECHO_CALL_HEADERS, 'mcp-name': 'progress' } }, (res) => {
        let firstEventUs: number | undefined;
        let text = '';
        res.on('data', (b: Buffer) => {
          firstEventUs ??= systemClock.nowUs();
          text += b.toString('utf8');
        });
        res.on('end', () => {
          const line = text.split('\n').find((l) => l.includes('notifications/progress'));
          const meta = line ? (JSON.parse(line.slice(line.indexOf('{'))) as { params: { _meta: Record<string, number> } }).params._meta : undefined;
          if (!meta || firstEventUs === undefined) return resolve(undefined);
          resolve({
            token,
            sentUs,
            firstEventUs,
            arrivedAtUs: meta[PROGRESS_ARRIVED_META]!,
            startedAtUs: meta[PROGRESS_STARTED_META]!,
            serverSentUs: meta[PROGRESS_SENT_META]!,
          });
        });
      });
      req.on('error', () => resolve(undefined));
      const sentUs = systemClock.nowUs();
      req.end(body);
    });
  try {
    // Connections first (the same calls, left out), then n arrivals spread over `overMs`.
    await Promise.all(Array.from({ length: warm }, (_, i) => one(-1 - i, TTFE_DELAY_MS)));
    const runs: Promise<Stream | undefined>[] = [];
    for (let i = 0; i < n; i++) {
      runs.push(one(i, TTFE_DELAY_MS));
      await new Promise((r) => setTimeout(r, overMs / n));
    }
    return (await Promise.all(runs)).filter((x): x is Stream => x !== undefined);
  } finally {
    agent.destroy();
  }
}

/** One round's streams: the load engine direct and through the tap, the tap's recording of the latter, and the bare client. */
interface TtfeRound {
  direct: Stream[];
  viaTap: Stream[];
  tapSeen: (Stream & { clientSentUs: number })[];
  bare: Stream[];
}

const TTFE_WARM = 110;
const ttfeArgs = `{ steps: 1, intervalMs: ${TTFE_DELAY_MS} }`;
// Connections first: the same calls from 110 virtual users at once, whose records are left out (a
// TCP connect is no part of a server's first-event time); then 100 arrivals over the delay itself,
// so that all 100 streams are open at once when the last one starts.
const ttfeMeasured = `{ closed: { vus: ${TTFE_WARM}, iterations: 1 } }, { open: { rate: ${100_000 / TTFE_DELAY_MS}, duration: ${TTFE_DELAY_MS}ms, maxInFlight: 200 } }`;
const ttfeWarmUp = (url: string) => runLoad(scenarioFor(url, `{ closed: { vus: 20, iterations: 2 } }`, `{ steps: 1, intervalMs: 10 }`));

/** The streams of a measured run, its connection-opening phase left out. */
function measuredStreams(into: Stream[]): { onRecord: (rec: CallRecord) => void } {
  let seen = 0;
  return {
    onRecord: (rec) => {
      if (++seen <= TTFE_WARM) return;
      const st = streamOf(rec);
      if (st) into.push(st);
    },
  };
}

/** One round: direct, the bare client, then through a fresh recording tap (its own file). */
async function ttfeRound(upstream: string, record: string): Promise<TtfeRound> {
  const r: TtfeRound = { direct: [], viaTap: [], tapSeen: [], bare: [] };
  await runLoad(scenarioFor(upstream, ttfeMeasured, ttfeArgs), measuredStreams(r.direct));
  r.bare = await bareClientStreams(upstream, 100, TTFE_DELAY_MS, TTFE_WARM);
  const tap = await startTap(upstream, record);
  try {
    await ttfeWarmUp(tap.url);
    await runLoad(scenarioFor(tap.url, ttfeMeasured, ttfeArgs), measuredStreams(r.viaTap));
  } finally {
    await stopTapAndRecording(tap.child);
  }
  // The tap's view of the same calls, joined on the progress token the load engine sent.
  const byToken = new Map(r.viaTap.map((st) => [st.token, st]));
  r.tapSeen = recordedCalls(record, TTFE_DELAY_MS).flatMap((e) => {
    const token = (e.request as { params?: { _meta?: { progressToken?: string | number } } }).params?._meta?.progressToken;
    const st = token === undefined ? undefined : byToken.get(String(token));
    return st && e.transport?.firstEventUs !== undefined ? [{ ...st, sentUs: e.startUs, firstEventUs: e.transport.firstEventUs, clientSentUs: st.sentUs }] : [];
  });
  return r;
}

/**
 * Time-to-first-event accuracy in interleaved rounds (SSE_BENCH_ROUNDS, default 5; a p99 of 100
 * streams is their second worst, so one round says little): the distributions pooled over the
 * rounds, each round's p99, and the verdict read from the median round's p99.
 */
async function ttfeAccuracy(upstream: string, dir: string): Promise<string> {
  const roundsWanted = Number(process.env.SSE_BENCH_ROUNDS ?? 5);
  await ttfeWarmUp(upstream);
  const loadBefore = loadavg();
  const rounds: TtfeRound[] = [];
  for (let i = 0; i < roundsWanted; i++) {
    process.stderr.write(`sse bench: time to first event, round ${i + 1}/${roundsWanted}\n`);
    rounds.push(await ttfeRound(upstream, join(dir, `ttfe-${i}.db`)));
  }
  const loadAfter = loadavg();
  const all = <K extends keyof TtfeRound>(k: K) => rounds.flatMap((r) => r[k]) as TtfeRound[K];
  const d = TTFE_DELAY_MS * 1000;
  const rows: string[][] = [];
  const dist = (name: string, xs: number[]) => {
    rows.push([name, String(xs.length), ms(Math.min(...xs)), ms(percentile(xs, 50)), ms(percentile(xs, 90)), ms(percentile(xs, 99)), ms(Math.max(...xs))]);
  };
  // The accuracy figure: measured minus what the server actually did (its first event sent minus
  // the request's arrival at its HTTP layer). What is left is mcptap's stamping error plus the two
  // loopback transits; the server's dispatch and timer lateness are the server's, not mcptap's.
  const actual = (x: Stream) => x.serverSentUs - x.arrivedAtUs;
  const accuracy = (xs: Stream[]) => xs.map((x) => x.firstEventUs - x.sentUs - actual(x));
  // [who, streams, judged against the target]; the floor is the bare client's.
  const figures: [string, keyof TtfeRound, boolean][] = [
    ['load engine, direct', 'direct', true],
    ['tap recording', 'tapSeen', true],
    ['bare node:http client', 'bare', false],
    ['load engine, via tap', 'viaTap', false],
  ];
  const note: Partial<Record<keyof TtfeRound, string>> = { bare: ' (the floor)', viaTap: " (the tap's forwarding included)" };
  for (const [who, k] of figures) dist(`${who}: measured - server's actual${note[k] ?? ''}`, accuracy(all(k)));
  for (const [who, k] of [
    ['load engine, direct', 'direct'],
    ['load engine, via tap', 'viaTap'],
    ['tap recording', 'tapSeen'],
  ] as const) {
    const xs = all(k);
    dist(
      `${who}: measured - known`,
      xs.map((x) => x.firstEventUs - x.sentUs - d),
    );
    dist(
      `  request transit (send -> server's HTTP layer)`,
      xs.map((x) => x.arrivedAtUs - x.sentUs),
    );
    dist(
      `  event path (server sent -> stamped)`,
      xs.map((x) => x.firstEventUs - x.serverSentUs),
    );
  }
  // Where the tap's request path goes: reaching the tap, then the tap forwarding it and the server starting the tool.
  dist(
    `  of which client send -> tap saw it`,
    all('tapSeen').map((x) => x.sentUs - x.clientSentUs),
  );
  const both = all('direct').concat(all('viaTap'));
  dist(
    `server: dispatch (HTTP arrival -> tool started)`,
    both.map((x) => x.startedAtUs - x.arrivedAtUs),
  );
  dist(
    `server: timer lateness (actual - known - dispatch)`,
    both.map((x) => x.serverSentUs - x.startedAtUs - d),
  );
  // Each round's p99 of the accuracy figures, and the median round's: the verdict (never the best round).
  const p99s = new Map(figures.map(([, k]) => [k, rounds.map((r) => percentile(accuracy(r[k]), 99))]));
  const medianP99 = (k: keyof TtfeRound) => percentile(p99s.get(k)!, 50);
  const floor = medianP99('bare');
  const judged = figures.filter(([, , j]) => j);
  const verdicts = judged.map(([, k]) => medianP99(k) <= 2000);
  const perRound = figures.map(([who, k, j]) => [
    who,
    p99s
      .get(k)!
      .map((p) => (p / 1000).toFixed(2))
      .join(' '),
    ms(medianP99(k)),
    j ? (medianP99(k) <= 2000 ? 'yes' : 'NO') : '',
  ]);
  const above = judged.map(([who, k]) => `${who} ${medianP99(k) >= floor ? '+' : ''}${((medianP99(k) - floor) / 1000).toFixed(2)} ms`);
  return [
    `time to first event, known delay ${TTFE_DELAY_MS} ms, 100 concurrent streams (open model, 100 arrivals within the delay), ${rounds.length} interleaved rounds`,
    `load average before / after: ${loadBefore} / ${loadAfter}`,
    `'measured - server's actual' is the accuracy: the measured time to first event minus the server's own (first event sent - request arrived),`,
    `i.e. mcptap's stamping error plus the two loopback transits; then measured - known and its parts from the server's stamps (epoch µs, one clock):`,
    `measured - known = request transit + server dispatch + timer lateness + event path. All rounds pooled:`,
    table(['figure', 'streams', 'min', 'p50', 'p90', 'p99', 'max'], rows),
    `measured - server's actual, p99 of each round (ms) and of the median round (the target: within 2 ms):`,
    table(['figure', 'p99 per round', 'median round', 'within 2 ms'], perRound),
    `median-round p99 against the bare client's (the floor, ${ms(floor)}): ${above.join(', ')}`,
    `verdict: ${verdicts.every(Boolean) ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function scale(upstream: string, dir: string): Promise<string> {
  const streams = Number(process.env.SSE_BENCH_STREAMS ?? 1000);
  const seconds = Number(process.env.SSE_BENCH_SECONDS ?? 60);
  const intervalMs = 500;
  const steps = Math.round((seconds * 1000) / intervalMs);
  // Streams open at 100/s (1,000 at once would measure the server's start-up queue, not streaming).
  const rampS = Math.max(1, Math.ceil(streams / 100));
  const record = join(dir, 'scale.db');
  const tap = await startTap(upstream, record);
  const samples: { t: number; rss: number }[] = [];
  const t0 = Date.now();
  const timer = setInterval(() => samples.push({ t: (Date.now() - t0) / 1000, rss: rssBytes(tap.child.pid) }), 1000);
  let result: LoadResult;
  try {
    result = await runLoad(
      scenarioFor(
        tap.url,
        `{ open: { rate: ${streams / rampS}, duration: ${rampS}s, maxInFlight: ${streams} } }`,
        `{ steps: ${steps}, intervalMs: ${intervalMs} }`,
        `${seconds + 60}s`,
      ),
    );
  } finally {
    clearInterval(timer);
    await stopTapAndRecording(tap.child);
  }
  const rec = recordedFirstEventsUs(record);
  const live = samples.filter((s) => Number.isFinite(s.rss));
  const peak = Math.max(...live.map((s) => s.rss));
  const end = live.at(-1)!;
  const mid = live.find((s) => s.t >= end.t - 30) ?? live[0]!;
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
  const sse = result.overall.sse!;
  const expectedProgress = streams * steps;
  const ok = result.overall.counters.ok;
  const maxGap = Math.max(sse.gap.summary.max, sse.progress?.summary.max ?? 0);
  return [
    `${streams} concurrent SSE streams (opened at 100/s), a progress event every ${intervalMs} ms for ${seconds} s each, through mcptap http --record`,
    table(
      ['figure', 'value', 'bound'],
      [
        ['streams answered ok', `${ok} of ${result.overall.counters.requests}`, String(streams)],
        ['tap peak RSS', mb(peak), '-'],
        [`tap RSS growth, last 30 s (${mid.t.toFixed(0)} s -> ${end.t.toFixed(0)} s)`, mb(end.rss - mid.rss), '-'],
        ['longest gap between events (client)', ms(maxGap), `server interval ${intervalMs} ms`],
        ['progress gap p99 (client)', ms(sse.progress?.summary.p99 ?? NaN), '-'],
        ['first event p99 (client)', ms(sse.first_event.summary.p99), `${intervalMs} ms`],
        ['recorded tools/call exchanges', String(rec.calls), String(streams)],
        ['recorded progress notifications', String(rec.progress), String(expectedProgress)],
        ['recorded SSE events', String(rec.events), String(expectedProgress + streams)],
      ],
    ),
    `verdict: ${ok === streams && rec.progress === expectedProgress && rec.events === expectedProgress + streams ? 'every event recorded' : 'EVENTS MISSING'}; ` +
      `stalls: ${maxGap < 2 * intervalMs * 1000 ? `none (longest gap ${ms(maxGap)} < 2 x ${intervalMs} ms)` : `STALL (longest gap ${ms(maxGap)})`}`,
  ].join('\n');
}

/** 100 listen streams per era, direct and through the tap, while `trigger` fires every 100 ms. */
async function listen(upstream: string, dir: string): Promise<string> {
  const streams = 100;
  const triggers = 30;
  const rows: string[][] = [];
  for (const era of ['2026-07-28', 'legacy']) {
    for (const via of ['direct', 'via tap']) {
      const tap = via === 'via tap' ? await startTap(upstream, join(dir, `listen-${era}.db`)) : undefined;
      try {
        let ready = 0;
        const running = runLoad(
          loadYaml(
            `
name: sse-bench-listen
target: { url: "${tap?.url ?? upstream}", connections: ${streams + 10} }
era: ${era}
phases: [ { closed: { vus: ${streams}, duration: ${Math.ceil(triggers / 10) + 5}s } } ]
steps: [ { listen: { toolsListChanged: true } } ]
`,
            { source: 'sse-bench-listen.yaml', baseDir: process.cwd() },
          ),
          { onListenReady: (n) => (ready = n) },
        );
        for (let i = 0; i < 600 && ready < streams; i++) await new Promise((r) => setTimeout(r, 50));
        const channel = new HttpChannel({ url: upstream, timeoutMs: 60_000 });
        await new McpSession(channel, { era: 'modern' }).request('tools/call', {
          name: 'trigger',
          arguments: { notification: 'tools', count: triggers, intervalMs: 100 },
        });
        await channel.close();
        const l = (await running).listen!;
        const d = l.delay.summary;
        const exact = l.perStream.min === triggers && l.perStream.max === triggers && l.duplicates === 0;
        rows.push([
          `${era}, ${via}`,
          `${l.held}/${l.streams}`,
          `${l.perStream.min}..${l.perStream.max}`,
          String(l.duplicates),
          ms(d.p50),
          ms(d.p99),
          ms(d.max),
          exact ? 'yes' : 'NO',
        ]);
      } finally {
        if (tap) await stopTapAndRecording(tap.child);
      }
    }
  }
  return [
    `listen: ${streams} streams held open, trigger fires tools/list_changed ${triggers} times every 100 ms; delivery delay = arrival - the server's firing stamp`,
    table(['streams', 'held', 'per stream', 'dups', 'delay p50', 'p99', 'max', 'each once'], rows),
  ].join('\n');
}

export async function runSseBench(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-sse-bench-'));
  const target = await startTarget({ kind: 'reference', transport: 'http', inProcess: false, pool: 1 });
  if (target.kind !== 'http') throw new Error('reference target is not HTTP');
  try {
    const only = new Set((process.env.SSE_BENCH_PARTS ?? 'ttfe,listen,scale').split(','));
    const parts: string[] = [];
    if (only.has('ttfe')) parts.push(await ttfeAccuracy(target.url, dir));
    if (only.has('listen')) parts.push(await listen(target.url, dir));
    if (only.has('scale') && process.env.SSE_BENCH_STREAMS !== '0') parts.push(await scale(target.url, dir));
    return parts.join('\n\n');
  } finally {
    await target.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
