/**
 * `mcptap compare BASELINE.json CANDIDATE.json`: two load results side by side per method and tool,
 * with a regression verdict from the user's tolerances; exit 1 on a regression.
 */
import type { Command } from 'commander';
import { compareResults, DEFAULT_MIN_SAMPLES, DEFAULT_TOLERANCE_SPEC, parseTolerances } from '../../load/results/compare-results.js';
import { renderCompareHtml } from '../../load/report/compare-html.js';
import { loadChartLibrary } from '../../load/report/chart-library.js';
import { renderComparison } from '../../load/report/compare-report.js';
import { McptapError } from '../../errors.js';
import { ExitCode } from '../exit-codes.js';
import { readLoadResult } from '../load-result-file.js';
import { checkOutputPaths } from '../output-paths.js';
import { writeFileAtomic } from '../../util/atomic-write.js';

interface CompareFlags {
  maxRegression: string;
  minSamples: string;
  json?: string;
  html?: string;
}

export function register(program: Command): void {
  program
    .command('compare')
    .summary('compare two load results per method and tool; exit 1 on a regression')
    .description(
      'Puts two JSON results of `mcptap load --json` side by side: for the whole run, each method and each tool, the\n' +
        'latency p50/p95/p99 (from the intended start), the error rate of every layer (transport, HTTP status,\n' +
        'JSON-RPC error, isError, unanswered) and the request rate, baseline → candidate, each judged against\n' +
        'the tolerances of --max-regression. A scope with fewer than --min-samples requests on either side gets\n' +
        'no verdict; a latency change under 1 ms is never a regression, nor an error-rate change within chance.',
    )
    .argument('<baseline>', 'the JSON result to compare against (the previous build, the main branch)')
    .argument('<candidate>', 'the JSON result under test')
    .option('--max-regression <spec>', 'how much worse each metric may get: p50/p95/p99=+N% or +Nms, errors=+N% (points), rate=-N%', DEFAULT_TOLERANCE_SPEC)
    .option('--min-samples <n>', 'requests needed on both sides for a verdict', String(DEFAULT_MIN_SAMPLES))
    .option('--json <file>', 'write the comparison as JSON; - for stdout')
    .option('--html <file>', 'write the comparison as a self-contained HTML page with charts (works offline)')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  mcptap load scenarios/demo.yaml --json main.json      # on the main branch',
        '  mcptap load scenarios/demo.yaml --json pr.json        # on the change',
        '  mcptap compare main.json pr.json',
        '  mcptap compare main.json pr.json --max-regression p95=+10%,p99=+25ms,errors=+0.5%',
        '  mcptap compare main.json pr.json --html compare.html',
        '',
        'Exit codes: 0 no regression, 1 a regression (the scopes and metrics are named), 2 a bad flag,',
        '4 a file that is not a load result.',
      ].join('\n'),
    )
    .action(async (baselineFile: string, candidateFile: string, flags: CompareFlags) => {
      const tolerances = parseTolerances(flags.maxRegression);
      const minSamples = Number(flags.minSamples);
      if (!Number.isInteger(minSamples) || minSamples < 1)
        throw new McptapError('MCPTAP_COMPARE_BAD_TOLERANCE', `--min-samples: ${flags.minSamples} is not a positive whole number`);
      checkOutputPaths(flags, 'MCPTAP_LOAD_BAD_OUTPUT', [baselineFile, candidateFile]);
      const [baseline, candidate] = await Promise.all([
        readLoadResult(baselineFile, 'MCPTAP_COMPARE_UNREADABLE'),
        readLoadResult(candidateFile, 'MCPTAP_COMPARE_UNREADABLE'),
      ]);
      const comparison = compareResults(baseline, candidate, { tolerances, minSamples, labels: [baselineFile, candidateFile] });
      const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
      const text = renderComparison(comparison, { color: flags.json !== '-' && color });
      if (flags.json === '-') {
        process.stderr.write(text);
        process.stdout.write(JSON.stringify(comparison) + '\n');
      } else {
        process.stdout.write(text);
        if (flags.json) await writeAtomically('--json', flags.json, JSON.stringify(comparison, null, 1) + '\n');
      }
      if (flags.html) await writeAtomically('--html', flags.html, renderCompareHtml(comparison, baseline, candidate, loadChartLibrary()));
      process.exitCode = comparison.regressions.length > 0 ? ExitCode.Failed : ExitCode.Ok;
    });
}

async function writeAtomically(flag: string, path: string, text: string): Promise<void> {
  try {
    await writeFileAtomic(path, text);
  } catch (err) {
    throw new McptapError(
      'MCPTAP_LOAD_WRITE_FAILED',
      `${flag} ${path}: cannot write the comparison (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}
