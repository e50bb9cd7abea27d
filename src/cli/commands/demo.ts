/** `mcptap demo`: what `npm start` runs. */
import type { Command } from 'commander';
import { ExitCode } from '../exit-codes.js';

export function register(program: Command): void {
  program
    .command('demo')
    .summary('run the bundled reference server behind the tap under a ~20 s load, print summaries')
    .description(
      'The default (HTTP): the reference server over Streamable HTTP behind `mcptap http --record`, loaded with ' +
        'scenarios/demo.yaml for about 20 s with a progress display; then the load summary and what the tap recorded. ' +
        '--stdio: the reference server through `mcptap stdio --record`, driven by the MCP SDK client with a short call mix. ' +
        'No network and no Docker: everything runs locally; the recording is a local SQLite file.',
    )
    .option('--record <file>', 'recording file', 'mcptap-demo.db')
    .option('--stdio', 'the short stdio demo instead of the HTTP load demo')
    .option('--scenario <file>', 'scenario for the HTTP demo (its target is replaced by the tap)')
    .option('--calls <n>', 'stdio demo: echo calls in the mix', '40')
    .addHelpText(
      'after',
      `
Examples:
  mcptap demo --stdio                     # about 2 s
  mcptap demo                             # about 20 s of load through the HTTP tap
  mcptap demo --scenario scenarios/cancel.yaml --record /tmp/demo.db
  mcptap ls mcptap-demo.db                # then look at what was recorded`,
    )
    .action(async (flags: { record: string; stdio?: boolean; scenario?: string; calls: string }) => {
      if (flags.stdio) {
        const { runStdioDemo } = await import('../../demo/stdio-demo.js');
        await runStdioDemo({ db: flags.record, calls: Number(flags.calls) });
        return;
      }
      const { runHttpDemo } = await import('../../demo/http-demo.js');
      // A demo reports its thresholds but does not fail on them; `mcptap load` exits 3 when they fail.
      await runHttpDemo({ db: flags.record, ...(flags.scenario ? { scenario: flags.scenario } : {}) });
      process.exitCode = ExitCode.Ok;
    });
}
