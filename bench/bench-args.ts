/**
 * The command line of `npm run bench` (bench/run.ts): which benchmarks, which options, and the usage
 * text. Pure, so that a test can check it; run.ts does the IO.
 */

export interface BenchInfo {
  /** One line: what it measures against what. */
  what: string;
  /** Run only when named (long, or a fault experiment). */
  namedOnly?: boolean;
  /** Environment variables it reads. */
  env?: string[];
}

export const BENCHES = {
  stdio: {
    what: 'stdio tap --record vs a bare byte-forwarding shim: rate and added RTT, 200 B and 10 KB',
    env: [
      "MCPTAP_SPOOL_BYTES=2147483648 (the tap's spool)",
      'MCPTAP_BENCH_ROUNDS=3',
      'MCPTAP_BENCH_SECONDS=3',
      'MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js',
    ],
  },
  http: {
    what: 'HTTP tap --record vs a bare undici proxy and nginx: req/s, added latency, SSE timing',
    env: ['MCPTAP_BENCH_ROUNDS=3', 'MCPTAP_BENCH_SECONDS=4', 'MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js'],
  },
  load: {
    what: "mcptap load's HTTP and stdio drivers vs autocannon, Artillery and a stdio pump",
    env: ['MCPTAP_BENCH_ARTILLERY=/path/to/artillery', 'MCPTAP_BENCH_ARTILLERY_VERSION=2.0.21'],
  },
  otel: {
    what: 'HTTP tap at saturation, spans and metrics on vs off, and the deployed sampling',
    env: ['MCPTAP_BENCH_ROUNDS=5', 'MCPTAP_BENCH_WARMUP_S=8', 'MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js'],
  },
  recorder: { what: 'CPU per recorded exchange: Pipeline + SQLite recorder vs plain INSERTs' },
  'otel-cpu': { what: "CPU per exchange of telemetry, in process (otel's quick part)", env: ['MCPTAP_BENCH_EXCHANGES=20000', 'MCPTAP_BENCH_ROUNDS=5'] },
  startup: {
    what: 'ms to the first answer through the stdio and HTTP taps vs a bare shim and proxy',
    env: ['MCPTAP_BENCH_STARTUP_RUNS=7', 'MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js'],
  },
  'check-live': {
    what: 'HTTP tap --record --check vs the same tap without --check at saturation: req/s and CPU per request',
    env: ['MCPTAP_BENCH_ROUNDS=5', 'MCPTAP_BENCH_SECONDS=4', 'MCPTAP_BENCH_WARMUP_S=5'],
  },
  replay: { what: 'replay --pace fast vs load of the same mix; mock vs the reference server' },
  hostile: { what: "a client's median latency through the HTTP tap with and without 1,000 slowloris" },
  sse: {
    what: 'SSE time-to-first-event accuracy, listen streams, 1,000 streams through the tap',
    env: ['SSE_BENCH_PARTS=ttfe,listen,scale', 'SSE_BENCH_STREAMS=1000', 'SSE_BENCH_SECONDS=60'],
  },
  soak: {
    what: 'HTTP tap --record --otlp at a steady rate: RSS, fds, spool and loss over time',
    namedOnly: true,
    env: ['MCPTAP_SOAK_MINUTES=10', 'MCPTAP_SOAK_RATE=200', 'MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js'],
  },
  bigrec: {
    what: 'peak RSS of ls, show, export, check, replay, mock, mcp and ui on a 1,000,000-exchange recording; check messages/s; ui page times',
    namedOnly: true,
    env: [
      'MCPTAP_BIGREC_EXCHANGES=1000000',
      'MCPTAP_BIGREC_REPLAY_UNTIL=100s',
      'MCPTAP_BIGREC_ONLY=ls,show,export,check,replay,mock,mcp,ui',
      'MCPTAP_BIGREC_FLOOR_ROUNDS=3',
    ],
  },
  crash: {
    what: 'the recording tap SIGKILLed under traffic: file intact, marked incomplete, loss',
    namedOnly: true,
    env: ['MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js (--kills N each, alternating)'],
  },
  churn: { what: 'start/stop cycles of mcptap stdio --record: nothing left behind', namedOnly: true },
} satisfies Record<string, BenchInfo>;

export type BenchName = keyof typeof BENCHES;
const INFO: Record<string, BenchInfo | undefined> = BENCHES;

interface OptionInfo {
  /** Benches that read it. */
  for: string[];
  /** Placeholder of its value; none for a flag. */
  value?: string;
  help: string;
  /** A message when the value is not acceptable. */
  check?: (v: string) => string | undefined;
}

const positiveInt = (v: string) => (/^[1-9]\d*$/.test(v) ? undefined : 'a positive integer');
const positiveNumber = (v: string) => (Number(v) > 0 ? undefined : 'a positive number');
const BIGREC_COMMANDS = ['ls', 'show', 'export', 'check', 'replay', 'mock', 'mcp', 'ui'];

export const OPTIONS: Record<string, OptionInfo> = {
  '--kills': { for: ['crash'], value: 'N', help: 'kills per transport, and per build with MCPTAP_BENCH_BEFORE (default 20)', check: positiveInt },
  '--indexer-wait': { for: ['crash'], value: 'S', help: 'seconds to wait for the indexer after a kill (default 120)', check: positiveNumber },
  '--after-file': { for: ['crash'], help: 'count kill moments from when the recording file exists' },
  '--after-first-answer': { for: ['crash'], help: "count kill moments from the host's first answer" },
  '--cycles': { for: ['churn'], value: 'N', help: 'start/stop cycles (default 1000)', check: positiveInt },
  '--parallel': { for: ['churn'], value: 'P', help: 'cycles at a time (default 1)', check: positiveInt },
  '--minutes': { for: ['soak'], value: 'N', help: 'how long (default 10)', check: positiveNumber },
  '--rate': { for: ['soak'], value: 'N', help: 'calls per second (default 200)', check: positiveNumber },
  '--exchanges': { for: ['bigrec'], value: 'N', help: 'exchanges in the recording (default 1000000)', check: positiveInt },
  '--replay-until': {
    for: ['bigrec'],
    value: 'T',
    help: "replay's --until, e.g. 100s (the default) or all",
    check: (v) => (v === 'all' || /^\d+(\.\d+)?(ms|s|m)$/.test(v) ? undefined : 'a duration such as 100s, or all'),
  },
  '--only': {
    for: ['bigrec'],
    value: 'LIST',
    help: `commands to run, comma-separated: ${BIGREC_COMMANDS.join(',')}`,
    check: (v) => (v.split(',').every((c) => BIGREC_COMMANDS.some((k) => k.startsWith(c) && c)) ? undefined : `a list of ${BIGREC_COMMANDS.join(', ')}`),
  },
};

export type BenchArgs = { help: true } | { error: string } | { names: BenchName[]; argv: string[] };

/**
 * Bench names and options from the command line. `argv` is the options in `--name value` form
 * (`--name=value` split), for the benches that read them.
 */
export function parseBenchArgs(args: string[]): BenchArgs {
  const names: BenchName[] = [];
  const argv: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--help' || a === '-h') return { help: true };
    if (!a.startsWith('-')) {
      if (!INFO[a]) return { error: `unknown benchmark ${a}; known: ${Object.keys(BENCHES).join(', ')}` };
      names.push(a as BenchName);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    const opt = OPTIONS[name];
    if (!opt) return { error: `unknown option ${name}` };
    if (!opt.value) {
      if (eq > 0) return { error: `${name} takes no value` };
      argv.push(name);
      continue;
    }
    const value = eq > 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined || value === '') return { error: `${name} needs a value (${opt.value})` };
    const bad = opt.check?.(value);
    if (bad) return { error: `${name} ${value}: expected ${bad}` };
    argv.push(name, value);
  }
  const selected = names.length ? names : defaultBenches();
  for (let i = 0; i < argv.length; i++) {
    const opt = OPTIONS[argv[i]!];
    if (!opt) continue; // a value
    if (!opt.for.some((b) => (selected as string[]).includes(b)))
      return { error: `${argv[i]} is an option of ${opt.for.join(', ')}, which is not selected (npm run bench -- ${opt.for[0]} ${argv[i]} ...)` };
  }
  return { names: selected, argv };
}

export function defaultBenches(): BenchName[] {
  return (Object.keys(BENCHES) as BenchName[]).filter((b) => !INFO[b]!.namedOnly);
}

export function benchUsage(): string {
  const row = (name: string) => `  ${name.padEnd(10)} ${INFO[name]!.what}`;
  const options = Object.entries(OPTIONS).map(([name, o]) => `  ${o.for[0]!.padEnd(7)} ${`${name}${o.value ? ` ${o.value}` : ''}`.padEnd(24)} ${o.help}`);
  const env = Object.entries(INFO)
    .filter(([, b]) => b?.env)
    .map(([name, b]) => `  ${name.padEnd(10)} ${b!.env!.join(', ')}`);
  return [
    'usage: npm run bench -- [BENCH...] [OPTIONS]      (or: node dist/bench/run.js ..., after npm run build)',
    '',
    'Each benchmark measures mcptap and its baseline in the same run and prints the ratio; see the',
    "README's Benchmarks section for the targets. With no BENCH, every one but the long ones runs:",
    ...defaultBenches().map(row),
    '',
    'Run only when named (long runs and fault experiments):',
    ...Object.keys(BENCHES)
      .filter((b) => INFO[b]!.namedOnly)
      .map(row),
    '',
    'Options (given with the benchmark that reads them):',
    ...options,
    '',
    'Environment variables read (with their defaults):',
    ...env,
    '',
    'Examples:',
    '  npm run bench -- stdio http',
    '  npm run bench -- crash --kills 5 --indexer-wait 60',
    '  npm run bench -- churn --cycles 200 --parallel 4',
    '  npm run bench -- soak --minutes 2 --rate 200',
    '  npm run bench -- bigrec --exchanges 100000 --only ls,replay',
    '  SSE_BENCH_PARTS=ttfe,listen npm run bench -- sse',
    '',
    'Exit: 0 done, 2 bad command line. The machine is shared: quote `uptime` next to any figure.',
  ].join('\n');
}
