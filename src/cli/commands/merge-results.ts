/**
 * `mcptap merge-results FILE...`: add up results of shards (or any runs of one scenario) exactly —
 * counters sum, HDR histograms add bucket by bucket — and judge the thresholds again.
 */
import type { Command } from 'commander';
import type { LoadResult } from '../../load/results/load-result.js';
import { mergeResults } from '../../load/results/merge-results.js';
import { thresholdsPassed } from '../../load/results/threshold-eval.js';
import { McptapError } from '../../errors.js';
import { ExitCode } from '../exit-codes.js';
import { readLoadResult } from '../load-result-file.js';
import { writeOutputs } from './load.js';
import { checkOutputPaths } from '../output-paths.js';

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
    .option('--html <file>', 'write a self-contained HTML report of the merged result')
    .addHelpText(
      'after',
      `
Exit codes: 0 thresholds passed, 3 a threshold failed, 4 unreadable or incompatible results (a shard
missing or given twice, the same result twice, shards of edited versions of the scenario).

Examples:
  mcptap load scenarios/open-ramp.yaml --shard 1/2 --json shard-1.json   # on one machine
  mcptap load scenarios/open-ramp.yaml --shard 2/2 --json shard-2.json   # on another
  mcptap merge-results shard-*.json --json merged.json --junit thresholds.xml --html merged.html`,
    )
    .action(async (files: string[], flags: { json?: string; junit?: string; html?: string }) => {
      checkOutputPaths(flags, 'MCPTAP_LOAD_BAD_OUTPUT', files);
      const results = await Promise.all(files.map((f) => readLoadResult(f, 'MCPTAP_MERGE_UNREADABLE')));
      let merged: LoadResult;
      try {
        merged = mergeResults(results);
      } catch (err) {
        if (err instanceof McptapError) throw err;
        // Right shape, damaged content (a histogram that does not decode, say).
        throw new McptapError('MCPTAP_MERGE_UNREADABLE', `cannot merge these results: one is damaged (${(err as Error).message})`);
      }
      await writeOutputs(merged, flags);
      process.exitCode = thresholdsPassed(merged.thresholds) ? ExitCode.Ok : ExitCode.ThresholdFailed;
    });
}
