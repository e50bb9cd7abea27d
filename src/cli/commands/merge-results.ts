/**
 * `mcptap merge-results FILE...`: add up results of shards (or any runs of one scenario) exactly —
 * counters sum, HDR histograms add bucket by bucket — and judge the thresholds again.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { LoadResult } from '../../load/load-result.js';
import { mergeResults } from '../../load/merge-results.js';
import { thresholdsPassed } from '../../load/threshold-eval.js';
import { McptapError } from '../../errors.js';
import { ExitCode } from '../exit-codes.js';
import { checkOutputPaths, writeOutputs } from './load.js';

export function register(program: Command): void {
  program
    .command('merge-results')
    .summary('merge JSON results of load shards into one (exact histogram merge) and judge thresholds; recordings: see merge')
    .description(
      'Merges the JSON results of load-test shards (or of any runs of one scenario) into one: counters sum and HDR ' +
        'histograms add bucket by bucket, so percentiles are exact; the thresholds are judged again on the merged result. ' +
        'For recording files (several taps), use mcptap merge.',
    )
    .argument('<files...>', 'JSON results written by `mcptap load --json`')
    .option('--json <file>', 'write the merged JSON result; - for stdout')
    .option('--junit <file>', 'write thresholds of the merged result as JUnit XML')
    .addHelpText('after', '\nExit codes: 0 thresholds passed, 3 a threshold failed, 4 unreadable or incompatible results.')
    .action(async (files: string[], flags: { json?: string; junit?: string }) => {
      checkOutputPaths(flags);
      const results = await Promise.all(files.map(readResult));
      let merged: LoadResult;
      try {
        merged = mergeResults(results);
      } catch (err) {
        if (err instanceof McptapError) throw err;
        // Right shape, damaged content (a histogram that does not decode, say).
        throw new McptapError('MERGE_UNREADABLE', `cannot merge these results: one is damaged (${(err as Error).message})`);
      }
      await writeOutputs(merged, flags);
      process.exitCode = thresholdsPassed(merged.thresholds) ? ExitCode.Ok : ExitCode.ThresholdFailed;
    });
}

/** What a merge reads from every result. */
const RESULT_PARTS: ReadonlyArray<[keyof LoadResult, 'array' | 'object']> = [
  ['shards', 'array'],
  ['phases', 'array'],
  ['thresholdSpecs', 'array'],
  ['scheduleLag', 'object'],
  ['overall', 'object'],
  ['methods', 'object'],
  ['tools', 'object'],
  ['steps', 'object'],
];

async function readResult(file: string): Promise<LoadResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new McptapError('MERGE_UNREADABLE', `cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    const v = JSON.parse(text) as LoadResult;
    if (v?.format !== 'mcptap-load-result/1') throw new Error(`not an mcptap load result (format: ${String(v?.format)})`);
    const missing = RESULT_PARTS.filter(([key, kind]) => (kind === 'array' ? !Array.isArray(v[key]) : typeof v[key] !== 'object' || v[key] === null));
    if (missing.length > 0) throw new Error(`an incomplete mcptap load result (no ${missing.map(([k]) => k).join(', ')})`);
    return v;
  } catch (err) {
    throw new McptapError('MERGE_UNREADABLE', `${file}: ${(err as Error).message}`);
  }
}
