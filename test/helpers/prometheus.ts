/**
 * A real Prometheus server (the Debian `prometheus` package; .ci/run installs it on CI) for tests:
 * loopback only, temp config and TSDB, 1 s scrapes of the given targets, queried over its HTTP API.
 * Every wait is bounded; `stop()` ends exactly the process it started.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { unusedPort } from './tap-client.js';

/** An executable on PATH (or in /usr/bin), or undefined. */
export function findExecutable(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

export const PROMETHEUS = findExecutable('prometheus');
export const PROMTOOL = findExecutable('promtool');
/** CI must have the real thing; locally a missing binary skips instead. */
export const ON_CI = process.env.CI === 'true' || process.env.CI === '1';

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface RunningPrometheus {
  url: string;
  /** An instant query at "now"; throws on a PromQL or API error. */
  query(expr: string): Promise<PromSample[]>;
  /** Polls `query(expr)` until `ok` holds (bounded), returning the last result. */
  waitFor(expr: string, ok: (r: PromSample[]) => boolean, timeoutMs?: number): Promise<PromSample[]>;
  stop(): Promise<void>;
}

/** A Prometheus config scraping each job's `host:port` targets at /metrics every `intervalS`. */
export function scrapeConfig(jobs: Record<string, string[]>, intervalS = 1): string {
  const lines = ['global:', `  scrape_interval: ${intervalS}s`, `  evaluation_interval: ${intervalS}s`, 'scrape_configs:'];
  for (const [job, targets] of Object.entries(jobs)) {
    lines.push(
      `  - job_name: ${JSON.stringify(job)}`,
      `    scrape_interval: ${intervalS}s`,
      `    scrape_timeout: ${intervalS}s`,
      '    static_configs:',
      `      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `promtool <args>`: exit code and combined output. */
export function promtool(args: string[]): { code: number | null; output: string } {
  if (!PROMTOOL) throw new Error('promtool not found on PATH (Debian package: prometheus)');
  const r = spawnSync(PROMTOOL, args, { encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

export async function startPrometheus(jobs: Record<string, string[]>): Promise<RunningPrometheus> {
  if (!PROMETHEUS) throw new Error('prometheus not found on PATH (Debian package: prometheus)');
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-prom-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, scrapeConfig(jobs));
  const port = await unusedPort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    PROMETHEUS,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  child.stderr!.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-4000)));
  const stop = () => stopChild(child).finally(() => rmSync(dir, { recursive: true, force: true }));
  try {
    await waitUntil(
      async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true,
      15_000,
      () => `prometheus did not become ready: ${log}`,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  const query = async (expr: string): Promise<PromSample[]> => {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success') throw new Error(`PromQL ${expr}: ${body.error ?? res.status}`);
    if (body.data!.resultType !== 'vector') throw new Error(`PromQL ${expr}: expected a vector, got ${body.data!.resultType}`);
    return body.data!.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  return {
    url,
    query,
    async waitFor(expr, ok, timeoutMs = 10_000) {
      let last: PromSample[] = [];
      await waitUntil(
        async () => ok((last = await query(expr))),
        timeoutMs,
        () => `${expr} never satisfied the condition; last result ${JSON.stringify(last)}`,
      );
      return last;
    },
    stop,
  };
}

async function waitUntil(cond: () => Promise<boolean>, timeoutMs: number, why: () => string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(why());
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise<void>((r) => child.once('close', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await closed;
  clearTimeout(timer);
}
