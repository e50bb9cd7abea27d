/**
 * Every command's --help teaches: it ends with examples of the command itself. Built in process
 * from the same register functions the CLI uses.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_LOADERS } from '../../src/cli/commands/index.js';

describe('mcptap <command> --help', () => {
  it('has an Examples section with at least one example of that command, for every command', async () => {
    const program = new Command('mcptap').enablePositionalOptions();
    for (const load of Object.values(COMMAND_LOADERS)) (await load()).register(program);
    expect(program.commands.map((c) => c.name()).sort()).toEqual(Object.keys(COMMAND_LOADERS).sort());
    for (const cmd of program.commands) {
      let out = '';
      cmd.configureOutput({ writeOut: (s) => void (out += s) });
      cmd.outputHelp();
      expect(out, cmd.name()).toMatch(new RegExp(`\\nExamples:\\n(  .*\\n)*  (npx )?mcptap ${cmd.name()} `));
    }
  });

  it('every --outcome in a help text is one its command accepts (an example that fails teaches nothing)', async () => {
    const program = new Command('mcptap').enablePositionalOptions();
    for (const load of Object.values(COMMAND_LOADERS)) (await load()).register(program);
    for (const cmd of program.commands) {
      const choices = cmd.options.find((o) => o.long === '--outcome')?.argChoices;
      let out = '';
      cmd.configureOutput({ writeOut: (s) => void (out += s) });
      cmd.outputHelp();
      for (const [, value] of out.matchAll(/--outcome (\w+)/g)) expect(choices, `${cmd.name()} --outcome ${value}`).toContain(value);
    }
  });
});
