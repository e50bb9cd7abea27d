/** Thresholds as JUnit XML (one test case per threshold), for CI test reports. Pure. */
import type { LoadResult } from '../load-result.js';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

export function renderJunit(r: LoadResult): string {
  const failures = r.thresholds.filter((t) => !t.ok).length;
  const secs = (r.wallMs / 1000).toFixed(3);
  const cases = r.thresholds.map((t) => {
    const open = `    <testcase classname="${esc(`mcptap.load.${r.scenario}.${t.scope}`)}" name="${esc(t.expression)}" time="${secs}">`;
    const body = t.ok
      ? `      <system-out>${esc(`observed ${t.observedText}`)}</system-out>`
      : `      <failure message="${esc(`observed ${t.observedText}`)}" type="threshold">${esc(`${t.scope}: ${t.expression} failed: observed ${t.observedText}`)}</failure>`;
    return `${open}\n${body}\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mcptap load" tests="${r.thresholds.length}" failures="${failures}" time="${secs}">`,
    `  <testsuite name="${esc(r.scenario)}" tests="${r.thresholds.length}" failures="${failures}" errors="0" time="${secs}" timestamp="${esc(r.startedAt)}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
