/**
 * Artillery (npm) for the load bench: found or installed in a temp directory OUTSIDE the repo (never
 * into the project's node_modules), then run as a child process on a closed-model approximation of
 * a scenario: `vus` virtual users arrive over the first second and each loops one POST until
 * `seconds` have passed since its own first request (a `whileTrue` processor function), so that
 * all of them are busy back to back in the steady window the bench measures.
 *
 * Where Artillery comes from, first match wins:
 *   MCPTAP_BENCH_ARTILLERY      path of an `artillery` executable;
 *   <tmpdir>/mcptap-bench-artillery-<version>/node_modules/.bin/artillery (installed on first use with
 *   `npm install --prefix … --ignore-scripts`: the install scripts only fetch Playwright browsers,
 *   which the HTTP engine does not use). Version: MCPTAP_BENCH_ARTILLERY_VERSION, default 2.0.21,
 *   the last release whose `engines` accepts Node 20.
 * Any failure becomes a `skipped` reason, never an exception: the bench reports the row as skipped.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ARTILLERY_VERSION = process.env.MCPTAP_BENCH_ARTILLERY_VERSION ?? '2.0.21';
const INSTALL_TIMEOUT_MS = 10 * 60_000;

export interface ArtilleryJob {
  /** Full URL of the endpoint (origin + path). */
  url: string;
  headers: Record<string, string>;
  body: string;
  vus: number;
  seconds: number;
  /** Scratch directory for the script, processor and report. */
  dir: string;
}

export interface ArtilleryRun {
  responses: number;
  errors: number;
  /** Artillery's own aggregate request rate. */
  ownRps: number;
  p50Ms: number;
  p99Ms: number;
}

interface Exited {
  code: number | null;
  output: string;
}

/** Run a command; keeps the last 4 KB of its combined output. Kills it after `timeoutMs`. */
function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Exited> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (b: Buffer) => {
      output = (output + b.toString()).slice(-4096);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      output += `\n(killed after ${opts.timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, output: err.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const lastLine = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .pop() ?? '(no output)';

/** The artillery executable, installing it into the temp directory when needed; or why not. */
export async function findArtillery(log: (line: string) => void): Promise<{ bin: string } | { skipped: string }> {
  const given = process.env.MCPTAP_BENCH_ARTILLERY;
  if (given) return existsSync(given) ? { bin: given } : { skipped: `MCPTAP_BENCH_ARTILLERY=${given} does not exist` };
  const prefix = join(tmpdir(), `mcptap-bench-artillery-${ARTILLERY_VERSION}`);
  const bin = join(prefix, 'node_modules', '.bin', 'artillery');
  if (existsSync(bin)) return { bin };
  log(`installing artillery@${ARTILLERY_VERSION} into ${prefix} (once; outside the repo)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const env = { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' };
  const args = ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', `artillery@${ARTILLERY_VERSION}`];
  const r = await run(npm, args, { env, timeoutMs: INSTALL_TIMEOUT_MS });
  if (r.code !== 0 || !existsSync(bin)) return { skipped: `npm install artillery@${ARTILLERY_VERSION} failed (exit ${r.code}): ${lastLine(r.output)}` };
  return { bin };
}

function scriptYaml(job: ArtilleryJob): string {
  const u = new URL(job.url);
  // JSON is valid YAML: no quoting pitfalls for the body or the header values.
  const config = {
    config: {
      target: u.origin,
      phases: [{ duration: 1, arrivalCount: job.vus }],
      processor: './processor.cjs',
      http: { timeout: 30 },
    },
    scenarios: [{ flow: [{ loop: [{ post: { url: u.pathname + u.search, headers: job.headers, body: job.body } }], whileTrue: 'keepGoing' }] }],
  };
  return JSON.stringify(config, null, 2);
}

// Each virtual user keeps going until `seconds` have passed since its own first request.
const processor = (ms: number) => `module.exports = {
  keepGoing(context, next) {
    const now = Date.now();
    if (context.vars.benchStartMs === undefined) context.vars.benchStartMs = now;
    return next(now - context.vars.benchStartMs < ${ms});
  },
};
`;

interface Summary {
  p50?: number;
  p99?: number;
}

interface Report {
  aggregate?: { counters?: Record<string, number>; rates?: Record<string, number>; summaries?: Record<string, Summary> };
}

/** One Artillery run of the job; a reason string when it could not run or produced no report. */
export async function runArtillery(bin: string, job: ArtilleryJob): Promise<ArtilleryRun | string> {
  const script = join(job.dir, 'artillery-load-bench.yml');
  const out = join(job.dir, 'artillery-report.json');
  writeFileSync(script, scriptYaml(job));
  writeFileSync(join(job.dir, 'processor.cjs'), processor(job.seconds * 1000));
  const env = { ...process.env, ARTILLERY_DISABLE_TELEMETRY: 'true' };
  const r = await run(bin, ['run', '--output', out, script], { cwd: job.dir, env, timeoutMs: (job.seconds + 120) * 1000 });
  if (r.code !== 0 || !existsSync(out)) return `artillery run failed (exit ${r.code}): ${lastLine(r.output)}`;
  const agg = (JSON.parse(readFileSync(out, 'utf8')) as Report).aggregate ?? {};
  const counters = agg.counters ?? {};
  const rt = agg.summaries?.['http.response_time'] ?? {};
  const errors = Object.entries(counters).reduce((a, [k, v]) => (k.startsWith('errors.') ? a + v : a), 0);
  const non2xx = Object.entries(counters).reduce((a, [k, v]) => (/^http\.codes\.[^2]/.test(k) ? a + v : a), 0);
  return {
    responses: counters['http.responses'] ?? 0,
    errors: errors + non2xx,
    ownRps: agg.rates?.['http.request_rate'] ?? NaN,
    p50Ms: rt.p50 ?? NaN,
    p99Ms: rt.p99 ?? NaN,
  };
}
