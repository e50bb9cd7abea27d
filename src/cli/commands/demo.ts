/** `mcptap demo`: what `npm start` runs. */
import type { Command } from 'commander';
import { runStdioDemo } from '../../demo/stdio-demo.js';

export function register(program: Command): void {
  program
    .command('demo')
    .summary('run the bundled reference server through the tap, drive a call mix, print a summary')
    .description('Needs no network and no Docker: everything runs locally and the recording is a local SQLite file.')
    .option('--record <file>', 'recording file', 'mcptap-demo.db')
    .option('--calls <n>', 'echo calls in the mix', '40')
    .action(async (flags: { record: string; calls: string }) => {
      await runStdioDemo({ db: flags.record, calls: Number(flags.calls) });
    });
}
