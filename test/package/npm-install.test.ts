/**
 * mcptap installed as a user installs it: `npm pack` of a copy of the sources without dist/ (the
 * tarball's build is prepack's), `npm install -g` of the tarball into an empty prefix, as the
 * install step of examples/replay-ci runs it (runtime dependencies resolved from the npm registry,
 * better-sqlite3's install script run), then the installed `mcptap` run from a directory outside the
 * repository: --help of the program and of every command, the stdio demo, ls, replay of the demo's
 * recording against the installed reference server and mock, and a short load with an HTML report.
 * Two shortcuts keep it under a minute and change nothing mcptap ships: npm prefers its local cache
 * (--prefer-offline: what is cached is not revalidated, what is missing is still fetched), and
 * better-sqlite3's prebuild-install finds the repository's own compiled binary as a local prebuild,
 * as a user's install finds the published one, instead of compiling SQLite for minutes when the
 * download fails. Without that binary the install falls back to download or compile as before.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

const work = mkdtempSync(join(tmpdir(), 'mcptap-npm-install-'));
const prefix = join(work, 'prefix');
const bin = join(prefix, 'bin', 'mcptap');
const run = join(work, 'run');

/** The environment without what `npm test` exports to its scripts (npm_config_*, npm_package_*), which would steer the npm below. */
const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));

/**
 * The repository's compiled better-sqlite3 packed as the prebuild its install script looks for
 * (`prebuild-install`'s local-prebuilds directory, named as its release assets are); undefined when
 * the repository has no such binary, and the install downloads or compiles one.
 */
function localPrebuilds(): string | undefined {
  const pkg = join(ROOT, 'node_modules', 'better-sqlite3');
  if (!existsSync(join(pkg, 'build', 'Release', 'better_sqlite3.node'))) return undefined;
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const dir = join(work, 'prebuilds');
  mkdirSync(dir);
  const asset = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(dir, asset), '-C', pkg, 'build/Release/better_sqlite3.node']);
  return dir;
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function sh(file: string, args: string[], cwd: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) =>
    execFile(file, args, { cwd, env: { ...env, NO_COLOR: '1' }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    }),
  );
}

const mcptap = (args: string[], timeoutMs = 60_000) => sh(bin, args, run, timeoutMs);

// The installed CLI's tests run at once: each writes files of its own in the run directory.
describe.concurrent('npm pack, then npm install -g of the tarball into an empty prefix', () => {
  let tarball: string;
  let files: string[];

  beforeAll(async () => {
    // The sources as a fresh clone has them: no dist/ (prepack builds it); the repository's node_modules for the build.
    const src = join(work, 'src');
    mkdirSync(src);
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.web.json', 'README.md', 'src', 'web', 'bin', 'scenarios', 'schemas'])
      cpSync(join(ROOT, f), join(src, f), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'), 'dir');
    const pack = await sh('npm', ['pack', '--json', '--pack-destination', work], src, 300_000);
    expect(pack.code, pack.stderr).toBe(0);
    const packed = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, packed[0]!.filename);
    files = packed[0]!.files.map((f) => f.path);
    mkdirSync(prefix);
    mkdirSync(run);
    // The install step of examples/replay-ci as written, the pinned tarball's URL swapped for this one, into the empty prefix.
    const steps = (
      parseYaml(readFileSync(join(ROOT, 'examples', 'replay-ci', 'github-actions.yml'), 'utf8')) as {
        jobs: { replay: { steps: { name?: string; run?: string }[] } };
      }
    ).jobs.replay.steps;
    const [npm, ...args] = steps.find((s) => s.name === 'Install mcptap')!.run!.split(/\s+/);
    expect(args).toEqual(['install', '-g', '--no-audit', '--no-fund', expect.stringMatching(/^https:\/\/\S+\/mcptap-\d+\.\d+\.\d+\.tgz$/)]);
    const prebuilds = localPrebuilds();
    if (prebuilds) env['npm_config_better_sqlite3_local_prebuilds'] = prebuilds;
    const install = await sh(npm!, [...args.slice(0, -1), '--prefer-offline', tarball, '--prefix', prefix], work, 840_000);
    expect(install.code, install.stderr).toBe(0);
  }, 1_200_000);

  it('the tarball holds the build, the launcher and the demo scenario; no tests, sources or source maps', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/mcptap.js',
        'dist/src/cli/main.js',
        'scenarios/demo.yaml',
        'schemas/mcp/2025-06-18/schema.json',
      ]),
    );
    expect(files.filter((f) => /^(test|src|bench|docs)\/|\.map$|\.ts$/.test(f))).toEqual([]);
    expect(existsSync(tarball)).toBe(true);
  });

  it('mcptap --help, and --help of every command it lists', async () => {
    const help = await mcptap(['--help']);
    expect(help.code, help.stderr).toBe(0);
    const listed = help.stdout.split('\nCommands:\n')[1]!.split('\n\n')[0]!;
    const commands = [...listed.matchAll(/^ {2}([a-z-]+) /gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['stdio', 'http', 'demo', 'reference', 'ls', 'show', 'load', 'replay', 'mock', 'probe-cancel']));
    // All at once: each is a process start-up that waits mostly on module loading (a dozen, bounded by the list).
    const helps = await Promise.all(commands.map(async (command) => ({ command, r: await mcptap([command, '--help']) })));
    for (const { command, r } of helps) {
      expect(r.code, `${command}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`Usage: mcptap ${command}`);
    }
    expect((await mcptap(['--version'])).stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  it('the stdio demo records, ls lists it, and replay against the installed reference server and mock finds no difference', async () => {
    const demo = await mcptap(['demo', '--stdio', '--record', 'demo.db']);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/exchanges 52 \(ok 50, jsonrpc_error 1, tool_error 1\)/);
    expect(demo.stdout).toMatch(/^ {2}mcptap ls demo\.db$/m); // what to run next, as installed
    expect(demo.stdout).not.toContain('npx');

    const ls = await mcptap(['ls', 'demo.db', '--json']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(JSON.parse(ls.stdout)).toMatchObject({ recordings: [{ exchanges: 52, complete: true }] });

    // check finds the vendored schemas in the installed package, and nothing wrong with the demo.
    const check = await mcptap(['check', 'demo.db']);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    // The reference server's tools declare no annotations: notes only, nothing at the error or warning level.
    expect(check.stdout).toMatch(/: \d+ finding\(s\): 0 error, 0 warning, \d+ note; passed/);

    // The reference server's info resource says when it started: the one answer that differs by design.
    writeFileSync(join(run, 'rules.yaml'), 'version: 1\nrules:\n  - method: resources/read\n    ignore: /result/contents/0/text\n');
    // Both at once, a JUnit file each.
    const servers = [
      ['reference', '--stdio'],
      ['mock', 'demo.db', '--stdio'],
    ];
    const replays = await Promise.all(
      servers.map((server) => mcptap(['replay', 'demo.db', '--rules', 'rules.yaml', '--junit', `replay-${server[0]}.xml`, '--', bin, ...server])),
    );
    for (const [i, server] of servers.entries()) {
      const replay = replays[i]!;
      expect(replay.code, `${server[0]}: ${replay.stdout}${replay.stderr}`).toBe(0);
      expect(replay.stdout).toMatch(/52 exchanges replayed: 52 same/);
      expect(readFileSync(join(run, `replay-${server[0]}.xml`), 'utf8')).toMatch(/<testsuites [^>]*tests="52" failures="0"/);
    }
  });

  it('load runs the reference server in a child and writes an HTML report with its chart library', async () => {
    writeFileSync(
      join(run, 'short.yaml'),
      'name: short\ntarget: { reference: true }\nera: 2026-07-28\nphases: [ { open: { rate: 10, duration: 1s } } ]\nsteps: [ { tool: echo, arguments: { text: hi } } ]\n',
    );
    const load = await mcptap(['load', 'short.yaml', '--progress', 'none', '--json', 'short.json', '--html', 'short.html']);
    expect(load.code, load.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(run, 'short.json'), 'utf8')) as { overall: { counters: { requests: number; ok: number } } };
    expect(result.overall.counters.ok).toBe(result.overall.counters.requests);
    expect(result.overall.counters.requests).toBeGreaterThan(0);
    expect(readFileSync(join(run, 'short.html'), 'utf8')).toContain('uPlot');
    expect(readdirSync(run)).toEqual(expect.arrayContaining(['short.json', 'short.html']));
  });
});
