/**
 * `npm run bench`: every benchmark, each measuring mcptap and its baseline in the same run and
 * printing the ratio. Select with arguments: `npm run bench -- stdio http`. Options take a value
 * (`npm run bench -- soak --minutes 2`) and go to every bench selected.
 */
import { runStdioBench } from './stdio-bench.js';
import { runHttpBench } from './http-bench.js';
import { runLoadBench } from './load-bench.js';
import { runOtelBench, runOtelCpuBench } from './otel-bench.js';
import { runRecorderBench } from './recorder-bench.js';
import { runStartupBench } from './startup-bench.js';
import { runReplayBench } from './replay-bench.js';
import { runHostileBench } from './hostile-bench.js';
import { runSseBench } from './sse-bench.js';
import { runSoakBench } from './soak-bench.js';
import { runBigrecBench } from './bigrec-bench.js';
import { runChurnBench, runCrashBench } from './crash-bench.js';

const args = process.argv.slice(2);
/** Bench names: the arguments that are neither an option nor an option's value. */
const wanted = args.filter((a, i) => !a.startsWith('-') && !args[i - 1]?.startsWith('--'));

const BENCHES: Record<string, () => Promise<string>> = {
  stdio: () => runStdioBench(),
  http: () => runHttpBench(),
  load: () => runLoadBench(),
  otel: () => runOtelBench(),
  recorder: () => runRecorderBench(),
  'otel-cpu': () => runOtelCpuBench(),
  startup: () => runStartupBench(),
  replay: () => runReplayBench(),
  hostile: () => runHostileBench(),
  sse: () => runSseBench(),
  soak: () => runSoakBench(args),
  bigrec: () => runBigrecBench(args),
  crash: () => runCrashBench(args),
  churn: () => runChurnBench(args),
};

/** Long runs, only when named. */
const NAMED_ONLY = new Set(['soak', 'bigrec', 'crash', 'churn']);
for (const name of wanted.length ? wanted : Object.keys(BENCHES).filter((b) => !NAMED_ONLY.has(b))) {
  const bench = BENCHES[name];
  if (!bench) {
    process.stderr.write(`unknown benchmark ${name}; known: ${Object.keys(BENCHES).join(', ')}\n`);
    process.exitCode = 2;
    continue;
  }
  process.stdout.write(`\n== ${name} ==\n${await bench()}\n`);
}
