/**
 * Thresholds as JUnit XML (one test case per threshold), for CI test reports; a run stopped early
 * adds one erroring test case, so a partial run never reads as a green one. Pure.
 */
import { xmlText as esc } from '../../report/format.js';
import type { LoadResult } from '../results/load-result.js';

export function renderJunit(r: LoadResult): string {
  // One shard sees part of the run: its thresholds are reported as skipped, for merge-results to judge.
  const shard = r.shards.length === 1 && r.shards[0]!.count > 1 ? r.shards[0]! : undefined;
  const failures = shard ? 0 : r.thresholds.filter((t) => !t.ok).length;
  const skipped = shard ? r.thresholds.length : 0;
  const secs = (r.wallMs / 1000).toFixed(3);
  const cases = r.thresholds.map((t) => {
    const open = `    <testcase classname="${esc(`mcptap.load.${r.scenario}.${t.scope}`)}" name="${esc(t.expression)}" time="${secs}">`;
    const body = shard
      ? `      <skipped message="${esc(`shard ${shard.index}/${shard.count} (observed ${t.observedText} on this shard): judged on the merged result by mcptap merge-results`)}"/>`
      : t.ok
        ? `      <system-out>${esc(`observed ${t.observedText}`)}</system-out>`
        : `      <failure message="${esc(`observed ${t.observedText}`)}" type="threshold">${esc(`${t.scope}: ${t.expression} failed: observed ${t.observedText}`)}</failure>`;
    return `${open}\n${body}\n    </testcase>`;
  });
  if (r.stopped) {
    const why = `stopped early (${r.stopped}): the figures and thresholds cover only what ran`;
    cases.push(
      `    <testcase classname="${esc(`mcptap.load.${r.scenario}`)}" name="the run completed its schedule" time="${secs}">\n      <error message="${esc(why)}" type="stopped">${esc(why)}</error>\n    </testcase>`,
    );
  }
  const errors = r.stopped ? 1 : 0;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mcptap load" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${secs}">`,
    `  <testsuite name="${esc(r.scenario)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${secs}" timestamp="${esc(r.startedAt)}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
