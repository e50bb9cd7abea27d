/**
 * `npm run bench`: every benchmark, each measuring mcptap and its baseline in the same run and
 * printing the ratio. Select with arguments: `npm run bench -- stdio http`.
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
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const name of wanted.length ? wanted : Object.keys(BENCHES)) {
  const bench = BENCHES[name];
  if (!bench) {
    process.stderr.write(`unknown benchmark ${name}; known: ${Object.keys(BENCHES).join(', ')}\n`);
    process.exitCode = 2;
    continue;
  }
  process.stdout.write(`\n== ${name} ==\n${await bench()}\n`);
}
