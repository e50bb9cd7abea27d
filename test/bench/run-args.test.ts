import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCHES, benchUsage, defaultBenches, OPTIONS, parseBenchArgs } from '../../bench/bench-args.js';

const RUN = join(import.meta.dirname, '..', '..', 'dist', 'bench', 'run.js');

describe('npm run bench command line', () => {
  it('--help prints the usage, every benchmark and option, and runs nothing (exit 0)', () => {
    const r = spawnSync(process.execPath, [RUN, '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${benchUsage()}\n`);
    expect(r.stdout).not.toContain('== ');
    for (const name of Object.keys(BENCHES)) expect(r.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    for (const opt of Object.keys(OPTIONS)) expect(r.stdout).toContain(opt);
    expect(r.stdout).toContain('crash --kills 5 --indexer-wait 60');
    expect(r.stdout).toContain('SSE_BENCH_PARTS');
  });

  it('refuses an unknown option or benchmark with exit 2 before running anything', () => {
    for (const args of [['--bogus'], ['stdoi'], ['crash', '--kills', 'many'], ['stdio', '--kills', '3']]) {
      const r = spawnSync(process.execPath, [RUN, ...args], { encoding: 'utf8', timeout: 30_000 });
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('npm run bench -- --help');
    }
  });

  it('parses names and options, splitting --name=value, flags taking no value', () => {
    expect(parseBenchArgs([])).toEqual({ names: defaultBenches(), argv: [] });
    expect(defaultBenches()).not.toContain('crash');
    expect(parseBenchArgs(['crash', '--after-file', '--kills=4', '--indexer-wait', '30'])).toEqual({
      names: ['crash'],
      argv: ['--after-file', '--kills', '4', '--indexer-wait', '30'],
    });
    expect(parseBenchArgs(['-h', 'stdio'])).toEqual({ help: true });
    expect(parseBenchArgs(['churn', '--cycles'])).toEqual({ error: '--cycles needs a value (N)' });
    expect(parseBenchArgs(['crash', '--after-file=1'])).toEqual({ error: '--after-file takes no value' });
    expect(parseBenchArgs(['bigrec', '--only', 'ls,bogus'])).toHaveProperty('error');
    expect(parseBenchArgs(['bigrec', '--only', 'ls,rep', '--replay-until', 'all'])).toEqual({
      names: ['bigrec'],
      argv: ['--only', 'ls,rep', '--replay-until', 'all'],
    });
  });
});

describe('npm run fuzz command line', () => {
  const FUZZ = join(import.meta.dirname, '..', 'fuzz', 'run-fuzz.mjs');
  it('--help prints the usage with examples and exits 0; a bad RUNS exits 2 with it, running nothing', () => {
    const help = spawnSync(process.execPath, [FUZZ, '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run fuzz -- \[RUNS\]\n[\s\S]*examples:\n {2}npm run fuzz/);
    const bad = spawnSync(process.execPath, [FUZZ, 'lots'], { encoding: 'utf8', timeout: 30_000 });
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^fuzz: RUNS must be a positive integer, got lots\nusage:/);
  });
});
