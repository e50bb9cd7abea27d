/**
 * What can be checked of docker-compose.yml and the Dockerfile without a Docker engine (there is
 * none where mcptap is developed): the compose file parses, pins every image, mounts files that
 * exist, and its service names, ports and hostnames agree with the Grafana provisioning, the
 * Prometheus scrape config, the OTLP endpoint and the load profile; the Dockerfile runs the same
 * install and build as .ci/run and ends as a non-root user; and the stack's own mcptap services
 * (reference server, tap, load profile) run from the compose file's exact command lines, as local
 * processes with the service hostnames pointed at loopback, and traffic shows on the tap's metrics.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RecordingStore } from '../../src/store/recording-store.js';
import { freeLoopbackPort } from '../../src/util/free-port.js';
import { MCPTAP, ROOT } from '../helpers/paths.js';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  expose?: string[];
  profiles?: string[];
}

const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');
const compose = parse(readFileSync(COMPOSE_FILE, 'utf8')) as { services: Record<string, Service>; volumes?: Record<string, unknown> };
const services = compose.services;
const readYaml = (file: string) => parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

/** `${NAME:-default}` as compose interpolates it with NAME unset. */
const interpolate = (s: string) => s.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
const flag = (svc: Service, name: string) => {
  const cmd = svc.command ?? [];
  const i = cmd.indexOf(name);
  return i >= 0 ? interpolate(cmd[i + 1]!) : undefined;
};
/** Container ports a service publishes or exposes. */
const portsOf = (svc: Service) => [...(svc.ports ?? []).map((p) => p.split(':').at(-1)!), ...(svc.expose ?? [])];

describe('docker-compose.yml', () => {
  it('pins current major versions of Jaeger 2, Prometheus 3 (OTLP receiver on) and Grafana, and builds mcptap', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['reference', 'tap', 'load', 'jaeger', 'prometheus', 'grafana']));
    for (const [name, svc] of Object.entries(services)) {
      if (svc.image === services.reference!.image) continue; // built from this repository
      expect(svc.image, name).toMatch(/:v?[0-9][^:]*$/); // a version tag, never latest
    }
    expect(services.jaeger!.image).toMatch(/jaegertracing\/jaeger:2\.\d+\.\d+$/);
    expect(services.prometheus!.image).toMatch(/prom\/prometheus:v3\.\d+\.\d+$/);
    expect(services.prometheus!.command).toContain('--web.enable-otlp-receiver');
    expect(services.grafana!.image).toMatch(/grafana\/grafana:1[2-9]\.\d+\.\d+$/);
    expect(services.reference!.build).toBe('.');
    for (const name of ['tap', 'load']) expect(services[name]!.image).toBe(services.reference!.image);
    for (const p of ['16686', '4317', '4318']) expect(portsOf(services.jaeger!)).toContain(p);
  });

  it('mounts only files that exist, and Grafana gets the provisioning and dashboards folders', () => {
    const binds = Object.values(services)
      .flatMap((s) => s.volumes ?? [])
      .filter((v) => v.startsWith('.'));
    expect(binds.length).toBeGreaterThanOrEqual(4);
    for (const v of binds) expect(existsSync(resolve(ROOT, v.split(':')[0]!)), v).toBe(true);
    expect(services.grafana!.volumes).toEqual(expect.arrayContaining(['./dashboards/provisioning:/etc/grafana/provisioning:ro', './dashboards:/var/lib/grafana/dashboards:ro']));
    const provider = readYaml(join(ROOT, 'dashboards', 'provisioning', 'dashboards', 'dashboards.yaml')) as { providers: { options: { path: string } }[] };
    expect(provider.providers[0]!.options.path).toBe('/var/lib/grafana/dashboards');
    const named = (services.tap!.volumes ?? []).map((v) => v.split(':')[0]!).filter((s) => !s.startsWith('.'));
    for (const n of named) expect(compose.volumes, n).toHaveProperty(n);
  });

  it('agrees on hostnames and ports: data sources, scrape targets, OTLP endpoint, upstream and load target', () => {
    const ds = readYaml(join(ROOT, 'dashboards', 'provisioning', 'datasources', 'datasources.yaml')) as { datasources: { uid: string; url: string }[] };
    for (const d of ds.datasources) {
      const u = new URL(d.url);
      expect(services[u.hostname], `${d.uid}: ${d.url}`).toBeDefined();
      expect(portsOf(services[u.hostname]!), d.url).toContain(u.port);
    }
    const tap = services.tap!;
    const metricsPort = flag(tap, '--metrics')!.split(':')[1]!;
    const prom = readYaml(join(ROOT, 'deploy', 'prometheus.yml')) as { scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] };
    const targets = prom.scrape_configs.find((j) => j.job_name === 'mcptap')!.static_configs.flatMap((c) => c.targets);
    expect(targets).toContain(`tap:${metricsPort}`);
    expect(portsOf(tap)).toContain(metricsPort);

    const otlp = new URL(tap.environment!.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT!);
    expect(otlp.pathname).toBe('/v1/traces');
    expect(portsOf(services[otlp.hostname]!)).toContain(otlp.port);

    // The load run's live metrics go to Prometheus' OTLP receiver.
    const loadOtlp = new URL(services.load!.environment!.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT!);
    expect(loadOtlp.hostname).toBe('prometheus');
    expect(loadOtlp.pathname).toBe('/api/v1/otlp/v1/metrics');
    expect(portsOf(services.prometheus!)).toContain(loadOtlp.port);
    expect(services.prometheus!.command).toContain('--web.enable-otlp-receiver');
    // The dashboards' Jaeger UI links point at the port compose publishes Jaeger's UI on.
    const jaegerUi = (JSON.parse(readFileSync(join(ROOT, 'dashboards', 'mcptap.json'), 'utf8')) as { templating: { list: { name: string; query?: string }[] } }).templating.list.find(
      (v) => v.name === 'jaeger_url',
    )!.query!;
    expect(services.jaeger!.ports).toContain(`${new URL(jaegerUi).port}:${new URL(jaegerUi).port}`);

    const upstream = new URL(flag(tap, '--upstream')!);
    expect(upstream.hostname).toBe('reference');
    expect(flag(services.reference!, '--http')).toBe(`0.0.0.0:${upstream.port}`);

    const scenarioPath = services.load!.command![1]!;
    expect(scenarioPath.startsWith('/app/scenarios/')).toBe(true);
    const scenario = readYaml(join(ROOT, 'scenarios', scenarioPath.slice('/app/scenarios/'.length))) as { target: { url: string } };
    const target = new URL(scenario.target.url);
    expect(target.hostname).toBe('tap');
    expect(flag(tap, '--listen')).toBe(`0.0.0.0:${target.port}`);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const runs = [...dockerfile.matchAll(/^RUN (.*(?:\\\n.*)*)/gm)].map((m) => m[1]!.replace(/\\\n\s*/g, ' '));

  it('installs and builds as .ci/run and npm test do, with the native addon built from source', () => {
    const ciInstall = readFileSync(join(ROOT, '.ci', 'run'), 'utf8').match(/^npm ci.*$/m)![0];
    expect(runs).toContain(ciInstall);
    const testScript = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.test!;
    expect(testScript.startsWith('npm run build')).toBe(true);
    expect(runs.some((r) => r.startsWith('npm run build'))).toBe(true);
    expect(dockerfile).toMatch(/^ENV npm_config_build_from_source=true$/m);
    // Everything the build compiles is copied in.
    const include = (JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] }).include.map((g) => g.split('/')[0]!);
    for (const dir of include) expect(dockerfile, dir).toMatch(new RegExp(`^COPY ${dir} ${dir}$`, 'm'));
  });

  it('is multi-stage and runs as a non-root user the mcptap entry point', () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBe(2);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toContain('ENTRYPOINT ["node", "/app/bin/mcptap.js"]');
    expect(existsSync(join(ROOT, 'bin', 'mcptap.js'))).toBe(true);
  });

  it('keeps everything the built CLI imports in production dependencies (the image prunes dev ones)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const imported = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.js') || e.name.endsWith('.mjs')) {
          for (const m of readFileSync(p, 'utf8').matchAll(/^\s*(?:import|export)\b[^'";]*?from\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
            const spec = (m[1] ?? m[2])!;
            if (spec.startsWith('.')) continue;
            if (spec.startsWith('node:')) continue;
            imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
          }
        }
      }
    };
    walk(join(ROOT, 'dist', 'src'));
    expect(imported.size).toBeGreaterThan(5);
    for (const name of imported) expect(pkg.dependencies, `${name} is imported by dist/src but is not a production dependency`).toHaveProperty([name]);
  });
});

describe('the stack without Docker: its mcptap services from their compose command lines', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-compose-'));
  const children: ReturnType<typeof spawn>[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `mcptap ARGS` and resolves once stderr shows `pattern`. */
  const start = (args: string[], pattern: RegExp) =>
    new Promise<ReturnType<typeof spawn>>((res, rej) => {
      const child = spawn(process.execPath, [MCPTAP, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(child);
      let err = '';
      const timer = setTimeout(() => rej(new Error(`no ${pattern} within 20 s: ${err}`)), 20_000);
      child.stderr!.on('data', (b: Buffer) => {
        err += b.toString();
        if (pattern.test(err)) {
          clearTimeout(timer);
          res(child);
        }
      });
      child.once('exit', (code) => rej(new Error(`mcptap ${args[0]} exited ${code}: ${err}`)));
    });

  it('reference <- tap <- load: the load profile traffic reaches the tap, its metrics and its recording', async () => {
    const port = { reference: await freeLoopbackPort(), tap: await freeLoopbackPort(), metrics: await freeLoopbackPort() };
    /** A compose argument as it works on this host: service hostnames and ports to loopback ones, /data and /app to local paths. */
    const local = (arg: string) =>
      interpolate(arg)
        .replace('reference:3333', `127.0.0.1:${port.reference}`)
        .replace('0.0.0.0:3333', `127.0.0.1:${port.reference}`)
        .replace('0.0.0.0:7077', `127.0.0.1:${port.tap}`)
        .replace('0.0.0.0:9464', `127.0.0.1:${port.metrics}`)
        .replace(/^\/data\//, `${dir}/`);
    await start(services.reference!.command!.map(local), /http:\/\/127\.0\.0\.1:\d+\/mcp/);
    const tap = await start(services.tap!.command!.map(local), /listening on http/);

    // The load profile as compose runs it, its target pointed at the local tap and its 24 h cut to 3 s, its step
    // draws seeded.
    const loadCmd = services.load!.command!;
    const scenarioText = readFileSync(join(ROOT, 'scenarios', loadCmd[1]!.slice('/app/scenarios/'.length)), 'utf8')
      .replace('http://tap:7077/mcp', `http://127.0.0.1:${port.tap}/mcp`)
      .replace('duration: 24h', 'duration: 3s')
      .replace(/^phases:/m, 'seed: 1 # the step mix is drawn from this seed: every tool shows up in 3 s\nphases:');
    const scenario = join(dir, 'compose-traffic.yaml');
    writeFileSync(scenario, scenarioText);
    const loadArgs = [loadCmd[0]!, scenario, ...loadCmd.slice(2), '--json', join(dir, 'load.json')];
    const code = await new Promise<number | null>((res) => spawn(process.execPath, [MCPTAP, ...loadArgs], { stdio: 'ignore' }).once('exit', res));
    expect(code).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, 'load.json'), 'utf8')) as { overall: { counters: { requests: number; transport: Record<string, number> } } };
    expect(result.overall.counters.requests).toBeGreaterThan(20);
    expect(result.overall.counters.transport).toEqual({});

    // The tap counts on its side path, a moment behind the traffic: poll (at most 50 times, 10 s).
    const tools = ['echo', 'delay', 'progress', 'fail', 'rpc-error'];
    let metrics = '';
    let counts: string[] = [];
    for (let i = 0; i < 50; i++) {
      metrics = await (await fetch(`http://127.0.0.1:${port.metrics}/metrics`)).text();
      counts = metrics.split('\n').filter((l) => l.startsWith('mcp_client_operation_duration_seconds_count{'));
      if (tools.every((t) => counts.some((l) => l.includes(`gen_ai_tool_name="${t}"`)))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const tool of tools) {
      expect(counts.find((l) => l.includes(`gen_ai_tool_name="${tool}"`)) ?? `${tool} missing from:\n${counts.join('\n')}`, tool).toMatch(/\} [1-9]\d*$/);
    }
    expect(metrics).toMatch(/mcptap_exchanges_total\{[^}]*mcp_method_name="initialize"[^}]*\} [1-9]/);

    const exited = new Promise((res) => tap.once('exit', res));
    tap.kill('SIGTERM');
    await exited;
    const store = RecordingStore.open(join(dir, 'tap.db'));
    try {
      const listed = store.listRecordings();
      expect(listed).toHaveLength(1);
      // Every load request plus each lane's initialize and notifications/initialized.
      expect(listed[0]!.exchanges).toBeGreaterThanOrEqual(result.overall.counters.requests);
    } finally {
      store.close();
    }
  });
});
