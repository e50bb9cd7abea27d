/**
 * How the property-based fuzz tests run (fast-check): each property gets `MCPTAP_FUZZ_RUNS` cases
 * (default 10,000 in `npm test`, on fixed seeds; `npm run fuzz` asks for more, on fresh seeds), a
 * failure prints its seed and path,
 * and every entry of regressions.json (seeds and paths that once failed) is replayed first, so a
 * failure found once stays a test case. `MCPTAP_FUZZ_COUNTS=file` makes each property append its
 * layer and case count to that file (`npm run fuzz` prints them per layer).
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const RUNS = Number(process.env.MCPTAP_FUZZ_RUNS ?? '') || 10_000;
const COUNTS = process.env.MCPTAP_FUZZ_COUNTS;
/**
 * `npm test` checks the same cases every run (a seed per property, from its name), so a red run
 * means a change broke something; `npm run fuzz` sets `MCPTAP_FUZZ_SEED=random` to explore.
 */
const SEED = process.env.MCPTAP_FUZZ_SEED ?? 'name';
const seedFor = (name: string): number | undefined =>
  SEED === 'random' ? undefined : SEED === 'name' ? createHash('sha256').update(name).digest().readInt32LE(0) : Number(SEED);
const REGRESSIONS = join(dirname(fileURLToPath(import.meta.url)), 'regressions.json');

/** A seed and path (fast-check's replay coordinates) that once failed, and what it found. */
export interface Regression {
  property: string;
  seed: number;
  path: string;
  found: string;
}

export function regressionsFor(property: string): Regression[] {
  const all = JSON.parse(readFileSync(REGRESSIONS, 'utf8')) as Regression[];
  return all.filter((r) => r.property === property);
}

/**
 * Checks `prop` on `runs` generated cases (a share of the run count, e.g. 0.1 for a costly one),
 * after replaying its regressions. The property's name is `layer: what` and keys regressions.json.
 */
export function fuzz<Ts>(name: string, prop: fc.IProperty<Ts>, opts: { share?: number; examples?: Ts[] } = {}): number {
  for (const r of regressionsFor(name)) {
    const replay = fc.check(prop, { seed: r.seed, path: r.path, numRuns: 1 });
    expect(replay.failed, `regression ${r.seed}:${r.path} (${r.found}) fails again: ${fc.defaultReportMessage(replay) ?? ''}`).toBe(false);
  }
  const numRuns = Math.max(1, Math.round(RUNS * (opts.share ?? 1)));
  const details = fc.check(prop, {
    numRuns,
    ...(seedFor(name) !== undefined ? { seed: seedFor(name) } : {}),
    ...(opts.examples ? { examples: opts.examples } : {}),
  });
  if (details.failed) {
    const entry: Regression = {
      property: name,
      seed: details.seed,
      path: details.counterexamplePath ?? '',
      found: String(details.errorInstance).slice(0, 200),
    };
    // The line to keep in regressions.json, so that the case is replayed from now on.
    process.stderr.write(`fuzz failure, keep as a regression case: ${JSON.stringify(entry)}\n`);
  }
  expect(details.failed, `${fc.defaultReportMessage(details) ?? ''}\n${String(details.errorInstance)}`).toBe(false);
  const cases = details.numRuns + (opts.examples?.length ?? 0);
  if (COUNTS) appendFileSync(COUNTS, JSON.stringify({ layer: name.split(':')[0], property: name, cases }) + '\n');
  return cases;
}

/** Cuts `buf` at the given offsets (any order, out-of-range ones ignored; empty pieces kept). */
export function cutAt(buf: Buffer, at: readonly number[]): Buffer[] {
  const pts = [0, ...at.map((x) => Math.min(buf.length, Math.max(0, x))).sort((a, b) => a - b), buf.length];
  return pts.slice(1).map((p, i) => buf.subarray(pts[i], p));
}

/** Cut points for a buffer of up to `max` bytes. */
export const cuts = (max = 4096) => fc.array(fc.nat({ max }), { maxLength: 12 });

/**
 * Counts the bytes Buffer.concat copies while `f` runs: a decoder that joins each byte at most once
 * copies at most its input (the work check that stands in for timing, which tests never assert).
 */
export function copiedBytes<T>(f: () => T): { value: T; copied: number } {
  const original = Buffer.concat;
  let copied = 0;
  Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
    const out = original(list, total);
    copied += out.length;
    return out;
  }) as typeof Buffer.concat;
  try {
    return { value: f(), copied };
  } finally {
    Buffer.concat = original;
  }
}
