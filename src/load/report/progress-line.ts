/** One line of live progress: rate (vs target), in flight, errors by layer. Pure. */
import type { ProgressSnapshot } from '../run/progress.js';

export function renderProgressLine(p: ProgressSnapshot): string {
  const target = p.targetRate !== undefined ? ` (target ${p.targetRate.toFixed(0)}/s)` : '';
  const e = p.errors;
  return (
    `[${(p.elapsedMs / 1000).toFixed(1)}s] ${p.phase}: ${p.rate.toFixed(0)} it/s${target}, in flight ${p.inFlight}, ` +
    `started ${p.started}, dropped ${p.dropped} | errors: transport ${e.transport}, http ${e.http}, jsonrpc ${e.jsonrpc}, ` +
    `tool ${e.tool}, violations ${e.violations}, checks ${e.checks}`
  );
}
