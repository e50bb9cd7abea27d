/**
 * stdio tap benchmark: message rate and added round-trip latency of `mcptap stdio --record` against
 * a bare byte-forwarding shim (spawn and pipe, no parsing), measured in the same run, for 200 B and
 * 10 KB messages. Direct (no shim) and the tap without --record are printed for reference, and
 * how much of the traffic the recording kept (its recorder drops rather than slow the traffic).
 *
 * The floor of recording: the tee shim (bench/fixtures/tee-shim.mjs) is the bare shim that also
 * writes every chunk to a file in RAM, on its one thread, and nothing else. Any recorder that keeps
 * the bytes pays at least that; the bench prints --record against it too.
 *
 * The tap's spool is set to 2 GiB here (MCPTAP_SPOOL_BYTES): a 3 s round of 10 KB messages spools
 * 1.0-1.2 GB, past the default 1 GiB ring, and a tap whose ring is full drops what it would have
 * observed (counted; `dropped` in the recording) and forwards faster for it. The bench
 * measures a recording that keeps everything, and says so when one did not.
 *
 * Also the CPU each pipelined phase cost per exchange, every process of the run counted (this
 * load generator, the shim or tap with its threads and children, the server): on the 2-core VMs
 * here the rate moves with load from outside the run by up to 2x within minutes, the CPU per
 * exchange far less, so their ratio (bare over --record) is the steadier figure of what recording
 * costs. The indexing a recording leaves for after the traffic is not in it (it is shown as the
 * time the recording took to complete).
 *
 * MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js adds that build's `mcptap stdio --record` as one
 * more mode of every round (the judged mode; the tap without --record is reference only): each
 * build's per-round ratio to the bare shim, its median and spread, and the two medians compared.
 * MCPTAP_BENCH_ROUNDS (3) and MCPTAP_BENCH_SECONDS (3) shorten a check.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingStore } from '../src/store/recording-store.js';
import { BEFORE, BENCH_FIXTURES, MCPTAP, beforeAfterLines, median, percentile, roundRatios, table, treeCpuUs } from './bench-util.js';

/** Interleaved rounds (MCPTAP_BENCH_ROUNDS); odd, so that the median round is a round. */
const ROUNDS = Number(process.env.MCPTAP_BENCH_ROUNDS) || 3;
/** Room for a whole round's traffic in the tap's spool (see the header); in RAM up to an eighth of memory. */
const BENCH_SPOOL_BYTES = 2 * 1024 ** 3;

type Mode = 'direct' | 'bare shim' | 'tee shim' | 'mcptap' | 'mcptap --record' | 'before: mcptap --record';
const MODES: Mode[] = ['direct', 'bare shim', 'tee shim', 'mcptap', 'mcptap --record', ...(BEFORE ? (['before: mcptap --record'] as const) : [])];

/** A mode that records, and its file in `dir`. */
const records = (mode: Mode) => mode.endsWith('--record');
const dbOf = (mode: Mode, payload: number, dir: string) => join(dir, `bench-${payload}${mode.startsWith('before') ? '-before' : ''}.db`);

interface Peer {
  child: ChildProcessByStdio<import('node:stream').Writable, import('node:stream').Readable, import('node:stream').Readable>;
  request(id: number): Promise<void>;
  close(): Promise<void>;
}

function startPeer(mode: Mode, payload: number, dir: string): Peer {
  const server = [process.execPath, join(BENCH_FIXTURES, 'echo-server.mjs')];
  const argv =
    mode === 'direct'
      ? server
      : mode === 'bare shim'
        ? [process.execPath, join(BENCH_FIXTURES, 'bare-shim.mjs'), ...server]
        : mode === 'tee shim'
          ? [process.execPath, join(BENCH_FIXTURES, 'tee-shim.mjs'), ...server]
          : mode === 'mcptap'
            ? [process.execPath, MCPTAP, 'stdio', '--', ...server]
            : [process.execPath, mode === 'mcptap --record' ? MCPTAP : BEFORE!, 'stdio', '--record', dbOf(mode, payload, dir), '--', ...server];
  const spool = records(mode) && !process.env.MCPTAP_SPOOL_BYTES ? { MCPTAP_SPOOL_BYTES: String(BENCH_SPOOL_BYTES) } : {};
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, PAYLOAD: String(payload), ...spool }, stdio: ['pipe', 'pipe', 'pipe'] });
  // The tap's stderr passes through, but for its once-a-second progress while the recording is
  // indexed after each round (the bench reports what the recording kept).
  createInterface({ input: child.stderr }).on('line', (l) => {
    if (!/still indexing the recording/.test(l)) process.stderr.write(`${l}\n`);
  });
  const waiting = new Map<number, () => void>();
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    buf += s;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const id = Number(/"id":(\d+)/.exec(line)?.[1]);
      waiting.get(id)?.();
      waiting.delete(id);
    }
  });
  const body = 'y'.repeat(Math.max(0, payload - 90));
  return {
    child,
    request(id) {
      return new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        child.stdin.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"t":"${body}"}}}\n`);
      });
    },
    close: () =>
      new Promise<void>((r) => {
        child.once('close', () => r());
        child.stdin.end();
      }),
  };
}

async function measure(mode: Mode, payload: number, dir: string, seconds: number, window: number) {
  // Each round records afresh: what a recording kept is judged against that round's traffic.
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbOf(mode, payload, dir)}${suffix}`, { force: true });
  const peer = startPeer(mode, payload, dir);
  let id = 0;
  for (let i = 0; i < 200; i++) await peer.request(++id); // warm-up
  // The tap's sinks boot after its server's first answer: measure the steady state, as before that
  // change (start-up has a bench of its own). The recording's row appears once its indexer is up.
  if (records(mode)) await recordingUp(dbOf(mode, payload, dir));
  const rtts: number[] = [];
  for (let i = 0; i < 1500; i++) {
    const t0 = process.hrtime.bigint();
    await peer.request(++id);
    rtts.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  let done = 0;
  const cpu0 = treeCpuUs(peer.child.pid);
  const own0 = process.cpuUsage();
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (performance.now() < end) {
        await peer.request(++id);
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - start) / 1000);
  const own = process.cpuUsage(own0);
  const cpuUs = (treeCpuUs(peer.child.pid) - cpu0 + own.user + own.system) / Math.max(1, done);
  // With --record, the tap ends once the recording is complete: how long that took after the traffic is
  // the indexing the run left for later (recording-indexer.ts).
  const closeStart = performance.now();
  await peer.close();
  const closeMs = performance.now() - closeStart;
  return {
    rate,
    cpuUs,
    p50: median(rtts),
    p99: percentile(rtts, 99),
    sent: id,
    closeMs,
    kept: records(mode) ? recorded(dbOf(mode, payload, dir)) : undefined,
  };
}

/** What the recording kept: a rate bought by dropping most of the recording would be no win. */
function recorded(path: string): { exchanges: number; dropped: number; notObserved: number } {
  const store = RecordingStore.open(path);
  try {
    const r = store.listRecordings()[0]!;
    const gaps = store.summary(r.id).anomalyKinds.dropped ?? 0;
    return { exchanges: r.exchanges, dropped: r.droppedQueue + r.droppedWrite, notObserved: gaps };
  } finally {
    store.close();
  }
}

type Measured = Awaited<ReturnType<typeof measure>>;

/** One mode's rounds as one row: the median of each figure; what the recording kept, from the last round. */
function medianOf(rounds: Measured[]): Measured {
  const last = rounds[rounds.length - 1]!;
  const mid = (f: (m: Measured) => number) => median(rounds.map(f));
  return { ...last, rate: mid((m) => m.rate), cpuUs: mid((m) => m.cpuUs), p50: mid((m) => m.p50), p99: mid((m) => m.p99) };
}

export async function runStdioBench(opts: { seconds?: number } = {}): Promise<string> {
  const seconds = opts.seconds ?? (Number(process.env.MCPTAP_BENCH_SECONDS) || 3);
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-bench-'));
  const rows: string[][] = [];
  const verdicts: string[] = [];
  try {
    for (const payload of [200, 10 * 1024]) {
      // Rounds interleave the modes, so that load from elsewhere on the machine hits every mode alike;
      // each figure is the median of its rounds, and the targets are judged on each round's own pair.
      const runs = new Map<Mode, Measured[]>(MODES.map((m) => [m, []]));
      // With another build in the rounds, every other round runs backwards: neither build always follows the other.
      for (let round = 0; round < ROUNDS; round++)
        for (const mode of BEFORE && round % 2 ? [...MODES].reverse() : MODES) runs.get(mode)!.push(await measure(mode, payload, dir, seconds, 32));
      const r = new Map([...runs].map(([mode, ms]) => [mode, medianOf(ms)]));
      const bare = r.get('bare shim')!;
      const tee = r.get('tee shim')!;
      const tap = r.get('mcptap --record')!;
      for (const mode of MODES) {
        const m = r.get(mode)!;
        rows.push([
          `${payload} B`,
          mode,
          m.rate.toFixed(0),
          (m.rate / bare.rate).toFixed(2) + 'x',
          m.p50.toFixed(0),
          (m.p50 - bare.p50).toFixed(0),
          m.p99.toFixed(0),
          m.cpuUs.toFixed(1),
        ]);
      }
      const perRound = (f: (tap: Measured, base: Measured) => number, base: Mode = 'bare shim', tapMode: Mode = 'mcptap --record') =>
        runs.get(tapMode)!.map((t, i) => f(t, runs.get(base)![i]!));
      const ratios = perRound((t, b) => t.rate / b.rate);
      const addedUs = perRound((t, b) => t.p50 - b.p50);
      const ratio = median(ratios);
      const added = median(addedUs);
      verdicts.push(
        `${payload} B, median round: rate ratio ${ratio.toFixed(2)}x (target >= 0.80x: ${ratio >= 0.8 ? 'met' : 'NOT met'}); added median RTT ${added.toFixed(0)} us (target <= 50 us: ${added <= 50 ? 'met' : 'NOT met'})`,
      );
      verdicts.push(roundRatios(ratios));
      verdicts.push(`  each round's added median RTT: ${addedUs.map((x) => x.toFixed(0)).join(', ')} us`);
      verdicts.push(
        `  CPU per exchange, every process: bare shim ${bare.cpuUs.toFixed(1)} us, --record ${tap.cpuUs.toFixed(1)} us (+${(tap.cpuUs - bare.cpuUs).toFixed(1)}); CPU-bound rate ratio implied ${(bare.cpuUs / tap.cpuUs).toFixed(2)}x`,
      );
      const teeRatios = perRound((t, b) => t.rate / b.rate, 'tee shim');
      verdicts.push(
        `  the floor, a shim that only keeps a copy of the bytes in RAM: tee shim ${(tee.rate / bare.rate).toFixed(2)}x the bare shim's rate, CPU ${tee.cpuUs.toFixed(1)} us (+${(tee.cpuUs - bare.cpuUs).toFixed(1)}); --record ${median(teeRatios).toFixed(2)}x the tee shim's rate in the median round`,
      );
      if (tap.kept) verdicts.push(keptLine('', tap));
      if (BEFORE) {
        const mode: Mode = 'before: mcptap --record';
        verdicts.push(`  against the MCPTAP_BENCH_BEFORE build (${BEFORE}), in the same rounds:`);
        verdicts.push(
          ...beforeAfterLines(
            '--record rate vs bare shim',
            ratios,
            perRound((t, b) => t.rate / b.rate, 'bare shim', mode),
            { higher: true },
          ),
        );
        const beforeAdded = perRound((t, b) => t.p50 - b.p50, 'bare shim', mode);
        verdicts.push(...beforeAfterLines('--record added median RTT', addedUs, beforeAdded, { higher: false, digits: 0, unit: ' us' }));
        const b = r.get(mode)!;
        verdicts.push(`  CPU per exchange, every process: --record ${tap.cpuUs.toFixed(1)} us, before: --record ${b.cpuUs.toFixed(1)} us`);
        if (b.kept) verdicts.push(keptLine('before: ', b));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    `stdio tap: ${seconds}s pipelined (32 in flight) per row, ${ROUNDS} interleaved rounds (medians); RTT over 1500 sequential requests; CPU: every process, pipelined phase`,
    table(['msg', 'mode', 'msgs/s', 'vs bare', 'p50 RTT us', 'added us', 'p99 RTT us', 'CPU us/exch'], rows),
    ...verdicts,
  ].join('\n');
}

/** What a recording kept, and how long it took to complete, in its last round. */
function keptLine(build: string, tap: Measured): string {
  const kept = tap.kept!;
  const gaps = kept.notObserved > 0 ? `, ${kept.notObserved} dropped gaps: NOT ALL RECORDED, the tap's side path was full` : '';
  return `  ${build}recording kept ${kept.exchanges} of ${tap.sent} exchanges (${kept.dropped} events dropped${gaps}); complete ${(tap.closeMs / 1000).toFixed(1)} s after the traffic stopped (last round)`;
}

/** Waits (up to 10 s) until the recording has its row: the tap's pipeline thread and indexer are up. */
async function recordingUp(db: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (RecordingStore.hasRecording(db)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the recording ${db} was not started within 10 s`);
}
