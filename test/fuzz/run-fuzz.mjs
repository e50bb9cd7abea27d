// `npm run fuzz [-- RUNS]`: the property-based fuzz tests (test/fuzz) with RUNS cases per property
// (default 100,000; `npm test` runs 10,000 on fixed seeds, this on fresh ones), then the generated cases per layer. A failure prints
// its seed and path: keep it in test/fuzz/regressions.json and it is replayed from then on.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const USAGE = `usage: npm run fuzz -- [RUNS]
  RUNS cases per property (default 100000, or MCPTAP_FUZZ_RUNS), on fresh random seeds
  (MCPTAP_FUZZ_SEED=N replays one). A failure prints its seed and path: add it to
  test/fuzz/regressions.json to replay it in npm test from then on.
examples:
  npm run fuzz                 # 100,000 cases per property
  npm run fuzz -- 5000         # a quick pass
exit: 0 no property failed, 1 one failed, 2 bad command line
`;
if (process.argv[2] === '--help' || process.argv[2] === '-h') {
  process.stdout.write(USAGE);
  process.exit(0);
}
const runs = Number(process.argv[2] ?? process.env.MCPTAP_FUZZ_RUNS ?? 100_000);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write(`fuzz: RUNS must be a positive integer, got ${process.argv[2] ?? process.env.MCPTAP_FUZZ_RUNS}\n${USAGE}`);
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'mcptap-fuzz-'));
const counts = join(dir, 'counts.jsonl');
const started = Date.now();
const r = spawnSync('npx', ['vitest', 'run', 'test/fuzz', '--testTimeout=0'], {
  stdio: 'inherit',
  env: { MCPTAP_FUZZ_SEED: 'random', ...process.env, MCPTAP_FUZZ_RUNS: String(runs), MCPTAP_FUZZ_COUNTS: counts },
});
let lines = [];
try {
  lines = readFileSync(counts, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
} catch {
  // no property finished
}
rmSync(dir, { recursive: true, force: true });
const byLayer = new Map();
for (const l of lines) {
  const e = byLayer.get(l.layer) ?? { cases: 0, properties: 0 };
  e.cases += l.cases;
  e.properties += 1;
  byLayer.set(l.layer, e);
}
process.stdout.write(`\nfuzz: ${runs} cases per property, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
for (const [layer, e] of [...byLayer].sort())
  process.stdout.write(`  ${layer.padEnd(24)} ${String(e.cases).padStart(10)} cases (${e.properties} ${e.properties === 1 ? 'property' : 'properties'})\n`);
const total = lines.reduce((n, l) => n + l.cases, 0);
process.stdout.write(`  ${'total'.padEnd(24)} ${String(total).padStart(10)} cases\n`);
process.exit(r.status ?? 1);
