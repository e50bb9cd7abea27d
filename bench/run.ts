/**
 * `npm run bench`: every benchmark, each measuring mcptap and its baseline in the same run and
 * printing the ratio. Select with arguments: `npm run bench -- stdio http`; options go to the
 * benches that read them (`npm run bench -- soak --minutes 2`); `--help` lists both (bench-args.ts).
 * Benches are imported only when they run, so that `--help` and a bad command line answer at once.
 */
import { benchUsage, parseBenchArgs, type BenchName } from './bench-args.js';

const parsed = parseBenchArgs(process.argv.slice(2));
if ('help' in parsed) {
  process.stdout.write(`${benchUsage()}\n`);
  process.exit(0);
}
if ('error' in parsed) {
  process.stderr.write(`bench: ${parsed.error}\n(npm run bench -- --help lists the benchmarks and their options)\n`);
  process.exit(2);
}
const { names, argv } = parsed;

const RUN: Record<BenchName, () => Promise<string>> = {
  stdio: async () => (await import('./stdio-bench.js')).runStdioBench(),
  http: async () => (await import('./http-bench.js')).runHttpBench(),
  load: async () => (await import('./load-bench.js')).runLoadBench(),
  otel: async () => (await import('./otel-bench.js')).runOtelBench(),
  recorder: async () => (await import('./recorder-bench.js')).runRecorderBench(),
  'otel-cpu': async () => (await import('./otel-bench.js')).runOtelCpuBench(),
  startup: async () => (await import('./startup-bench.js')).runStartupBench(),
  'check-live': async () => (await import('./check-live-bench.js')).runCheckLiveBench(),
  replay: async () => (await import('./replay-bench.js')).runReplayBench(),
  hostile: async () => (await import('./hostile-bench.js')).runHostileBench(),
  sse: async () => (await import('./sse-bench.js')).runSseBench(),
  soak: async () => (await import('./soak-bench.js')).runSoakBench(argv),
  bigrec: async () => (await import('./bigrec-bench.js')).runBigrecBench(argv),
  crash: async () => (await import('./crash-bench.js')).runCrashBench(argv),
  churn: async () => (await import('./crash-bench.js')).runChurnBench(argv),
};

for (const [i, name] of names.entries()) {
  process.stderr.write(`bench: ${name} (${i + 1}/${names.length}) started ${new Date().toISOString()}\n`);
  process.stdout.write(`\n== ${name} ==\n${await RUN[name]()}\n`);
}
