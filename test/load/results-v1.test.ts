/**
 * Result files written before the result algebra (test/load/fixtures/results-v1, made by its
 * generate.ts with the code of the day) still load, merge, compare and report byte for byte.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareResults } from '../../src/load/results/compare-results.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { mergeResults } from '../../src/load/results/merge-results.js';
import { renderComparison } from '../../src/load/report/compare-report.js';
import { renderCompareHtml } from '../../src/load/report/compare-html.js';
import { renderLoadHtml } from '../../src/load/report/html-report.js';
import { renderJunit } from '../../src/load/report/junit-report.js';
import { renderSummary } from '../../src/load/report/text-report.js';
import { ResultParts } from '../../src/load/results/result-parts.js';
import { evaluateThresholds, specsOfResult } from '../../src/load/results/threshold-eval.js';
import { LIB } from './fixtures/results-v1/fixture-inputs.js';
import { FIXTURES } from './scenario-fixtures.js';

const DIR = join(FIXTURES, 'results-v1');
const text = (name: string) => readFileSync(join(DIR, name), 'utf8');
const result = (name: string) => JSON.parse(text(name)) as LoadResult;
const json = (v: unknown) => JSON.stringify(v, null, 1) + '\n';

describe('results-v1 files', () => {
  for (const name of ['shard-1', 'shard-2', 'baseline', 'candidate']) {
    it(`${name}: loads into its parts and writes them back as they were, verdicts too`, () => {
      const r = result(`${name}.json`);
      const back = ResultParts.fromJSON(r).toJSON();
      for (const [key, value] of Object.entries(back)) expect(json(value), key).toBe(json(r[key as keyof LoadResult]));
      expect(evaluateThresholds(r, specsOfResult(r))).toEqual(r.thresholds);
    });
  }

  it('merge as they did', () => {
    expect(json(mergeResults([result('shard-1.json'), result('shard-2.json')]))).toBe(text('expected/merged.json'));
  });

  it('compare as they did', () => {
    const [a, b] = [result('baseline.json'), result('candidate.json')];
    const c = compareResults(a, b);
    expect(json(c)).toBe(text('expected/compare.json'));
    expect(renderComparison(c, { color: false })).toBe(text('expected/compare.txt'));
    expect(renderCompareHtml(c, a, b, LIB)).toBe(text('expected/compare.html'));
  });

  for (const name of ['shard-1', 'shard-2', 'merged', 'baseline']) {
    it(`${name}: reports as it did`, () => {
      const r = name === 'merged' ? mergeResults([result('shard-1.json'), result('shard-2.json')]) : result(`${name}.json`);
      expect(renderSummary(r)).toBe(text(`expected/${name}.txt`));
      expect(renderJunit(r)).toBe(text(`expected/${name}.junit.xml`));
      expect(renderLoadHtml(r, LIB)).toBe(text(`expected/${name}.html`));
    });
  }
});
