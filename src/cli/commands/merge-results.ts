/**
 * `mcptap merge-results FILE...`: add up results of shards (or any runs of one scenario) exactly —
 * counters sum, HDR histograms add bucket by bucket — and judge the thresholds again.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { LoadResult } from '../../load/load-result.js';
import { mergeResults } from '../../load/merge-results.js';
import { thresholdsPassed } from '../../load/threshold-eval.js';
import { ExitCode, McptapError } from '../exit-codes.js';
import { writeOutputs } from './load.js';

export function register(program: Command): void {
  program
    .command('merge-results')
    .summary('merge JSON results of load shards into one (exact histogram merge) and judge thresholds')
    .argument('<files...>', 'JSON results written by `mcptap load --json`')
    .option('--json <file>', 'write the merged JSON result; - for stdout')
    .option('--junit <file>', 'write thresholds of the merged result as JUnit XML')
    .addHelpText('after', '\nExit codes: 0 thresholds passed, 3 a threshold failed, 4 unreadable or incompatible results.')
    .action(async (files: string[], flags: { json?: string; junit?: string }) => {
      const results = await Promise.all(files.map(readResult));
      const merged = mergeResults(results);
      await writeOutputs(merged, flags);
      process.exitCode = thresholdsPassed(merged.thresholds) ? ExitCode.Ok : ExitCode.ThresholdFailed;
    });
}

async function readResult(file: string): Promise<LoadResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new McptapError('MERGE_UNREADABLE', `cannot read ${file}: ${(err as Error).message}`, ExitCode.InvalidInput);
  }
  try {
    const v = JSON.parse(text) as LoadResult;
    if (v?.format !== 'mcptap-load-result/1') throw new Error(`not an mcptap load result (format: ${String(v?.format)})`);
    return v;
  } catch (err) {
    throw new McptapError('MERGE_UNREADABLE', `${file}: ${(err as Error).message}`, ExitCode.InvalidInput);
  }
}
