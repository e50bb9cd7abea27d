/**
 * Merging results of shards (or of any runs of the same scenario): counters add, histograms add
 * bucket by bucket, phases add by position. Thresholds are judged again on the merged numbers.
 * Refuses to merge what cannot be one run: different scenarios, versions of one (thresholds,
 * phase durations) or phase layouts (a run stopped early may have run only the first phases), the
 * same shard twice, or the same result twice. A merge with a stopped run
 * is a stopped run.
 */
import { McptapError, type McptapErrorCode } from '../../errors.js';
import { RESULT_FORMAT, type LoadResult } from './load-result.js';
import { ResultParts } from './result-parts.js';
import { mergeSeries } from './series.js';
import { judgeWithDefaults, specsOfResult } from './threshold-eval.js';

export function mergeResults(results: readonly LoadResult[]): LoadResult {
  if (results.length === 0) throw new McptapError('MCPTAP_MERGE_EMPTY', 'nothing to merge: give at least one result file');
  const first = results[0]!;
  for (const r of results) checkCompatible(first, r);
  checkShards(results);
  checkDistinct(results);
  // Decoded once, added up, encoded once.
  const parts = ResultParts.fromJSON(first);
  for (const r of results.slice(1)) parts.merge(ResultParts.fromJSON(r));
  const merged: LoadResult = {
    ...first,
    startedAt: new Date(Math.min(...results.map((r) => Date.parse(r.startedAt)))).toISOString(),
    endedAt: new Date(Math.max(...results.map((r) => Date.parse(r.endedAt)))).toISOString(),
    wallMs: Math.max(...results.map((r) => r.wallMs)),
    shards: results.flatMap((r) => r.shards).sort((a, b) => a.index - b.index),
    ...parts.toJSON(),
    ...stoppedOf(results),
    // Series only when every part has them (a partial series would chart part of the run as all of it).
    series: results.slice(1).reduce<LoadResult['series']>((s, r) => (s && r.series ? mergeSeries(s, r.series) : undefined), first.series),
  };
  merged.thresholds = judgeWithDefaults(parts, merged.wallMs, specsOfResult(merged));
  return merged;
}

/** A merge with a stopped run is a stopped run (the first one's reason). */
function stoppedOf(results: readonly LoadResult[]): Pick<LoadResult, 'stopped'> {
  const stopped = results.find((r) => r.stopped !== undefined)?.stopped;
  return stopped !== undefined ? { stopped } : {};
}

function checkCompatible(a: LoadResult, b: LoadResult): void {
  const bad = (why: string) => new McptapError('MCPTAP_MERGE_MISMATCH', `cannot merge these results: ${why}`);
  if (b.format !== RESULT_FORMAT) throw bad(`unknown result format "${String(b.format)}" (expected ${RESULT_FORMAT})`);
  if (a.scenario !== b.scenario) throw bad(`they come from different scenarios ("${a.scenario}" and "${b.scenario}")`);
  const layout = (r: LoadResult) => r.phases.map((p) => `${p.name}/${p.kind}`).join(',');
  // A run stopped early may have run only the first phases: its layout is a prefix of the other's.
  const fits = (x: LoadResult, y: LoadResult) =>
    layout(x) === layout(y) || (x.stopped !== undefined && (x.phases.length === 0 || layout(y).startsWith(`${layout(x)},`)));
  if (!fits(a, b) && !fits(b, a)) throw bad(`their phases differ (${layout(a)} vs ${layout(b)})`);
  // Same name, edited scenario: a shard of another version would be summed in silently.
  const plan = (r: LoadResult) => r.phases.map((p) => `${p.plannedDurationMs ?? ''}`).join(',');
  const specs = (r: LoadResult) => JSON.stringify(r.thresholdSpecs);
  const samePlan = plan(a) === plan(b) || a.stopped !== undefined || b.stopped !== undefined;
  if (specs(a) !== specs(b) || !samePlan)
    throw bad(`they come from different versions of scenario "${a.scenario}" (${specs(a) !== specs(b) ? 'thresholds' : 'phase durations'} differ)`);
}

/** One result given twice would count its run twice: a run is known by its times and shards. */
function checkDistinct(results: readonly LoadResult[]): void {
  const seen = new Set<string>();
  for (const r of results) {
    const run = `${r.startedAt}|${r.endedAt}|${JSON.stringify(r.shards)}`;
    if (seen.has(run)) throw new McptapError('MCPTAP_MERGE_MISMATCH', `cannot merge these results: the same result is given twice (started ${r.startedAt})`);
    seen.add(run);
  }
}

/**
 * Shards of one run: the same count everywhere, each index once, none missing (a CI job that lost
 * one shard's artifact must not go green on the rest). Unsharded results (count 1) merge with each
 * other only: whole runs from several machines add up.
 */
function checkShards(results: readonly LoadResult[]): void {
  const bad = (code: McptapErrorCode, why: string) => new McptapError(code, `cannot merge these results: ${why}`);
  const shards = results.flatMap((r) => r.shards);
  const counts = new Set(shards.map((s) => s.count));
  if (counts.size > 1) throw bad('MCPTAP_MERGE_MIXED_SHARDS', `they are shards of differently split runs (${[...counts].map((c) => `of ${c}`).join(', ')})`);
  const count = shards[0]?.count ?? 1;
  if (count === 1) return;
  const seen = new Set<number>();
  for (const s of shards) {
    if (seen.has(s.index)) throw bad('MCPTAP_MERGE_DUPLICATE_SHARD', `shard ${s.index}/${count} appears twice`);
    seen.add(s.index);
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.has(i));
  if (missing.length > 0)
    throw bad(
      'MCPTAP_MERGE_MISSING_SHARD',
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${count}`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing`,
    );
}
