import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
/** Works from bench/ (tsx) and dist/bench/ (compiled). */
export const ROOT = here.includes(`${join('dist', 'bench')}`) ? join(here, '..', '..') : join(here, '..');
export const MCPTAP = join(ROOT, 'bin', 'mcptap.js');
export const BENCH_FIXTURES = join(ROOT, 'bench', 'fixtures');

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const median = (v: number[]) => percentile(v, 50);

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
