/**
 * `mcptap report RESULT.json`: the summary of a load result written earlier (by `load --json` or
 * `merge-results --json`), as text on stdout and, with --html, as a self-contained HTML page.
 */
import type { Command } from 'commander';
import { thresholdsPassed } from '../../load/results/threshold-eval.js';
import { ExitCode } from '../exit-codes.js';
import { readLoadResult } from '../load-result-file.js';
import { writeOutputs } from './load.js';
import { checkOutputPaths } from '../output-paths.js';

export function register(program: Command): void {
  program
    .command('report')
    .summary('show a saved load result as text, or write it as an HTML report with charts (--html)')
    .description(
      'Reads a JSON result of `mcptap load --json` (or `merge-results --json`) and prints its summary. With --html, ' +
        'writes one self-contained HTML file (charting library inlined, no network request): latency percentiles, ' +
        'achieved vs target rate, errors per layer and iterations in flight over time, the latency histogram, a table ' +
        'per method, tool and step, SSE figures, thresholds, phases and the scenario. Results of earlier mcptap ' +
        'versions have no per-second series: their report shows the totals without the charts over time.',
    )
    .argument('<result>', 'a JSON result file')
    .option('--html <file>', 'write the HTML report here')
    .option('--junit <file>', 'write the thresholds as JUnit XML')
    .addHelpText(
      'after',
      `
Examples:
  mcptap load scenarios/demo.yaml --json run.json
  mcptap report run.json --html run.html        # open run.html in any browser, offline
  mcptap merge-results shard-*.json --json all.json && mcptap report all.json --html all.html

Exit codes: 0 the result's thresholds passed, 3 one failed, 4 not a load result, 2 a bad flag
or an output path that cannot be written.`,
    )
    .action(async (file: string, flags: { html?: string; junit?: string }) => {
      checkOutputPaths(flags, 'MCPTAP_LOAD_BAD_OUTPUT', [file]);
      const result = await readLoadResult(file, 'MCPTAP_REPORT_UNREADABLE');
      await writeOutputs(result, flags);
      process.exitCode = thresholdsPassed(result.thresholds) ? ExitCode.Ok : ExitCode.ThresholdFailed;
    });
}
