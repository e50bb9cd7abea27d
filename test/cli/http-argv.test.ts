/**
 * `mcptap http` starts without commander when the fast reader (cli/http-argv.ts) is sure of the
 * line: differential checks that it reads every line it takes exactly as commander does (the same
 * flags object, defaults included), and leaves to commander every line commander refuses or answers
 * itself (help, unknown or malformed options, a missing value or --upstream, a bad --log-level), so
 * that messages and exit codes stay commander's. Then, through the built CLI (requires `npx tsc -p .`),
 * that lines left to commander still end as they did.
 */
import { spawnSync } from 'node:child_process';
import { Command, CommanderError, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { HTTP_DEFAULTS, HTTP_OPTIONS, readHttpArgv } from '../../src/cli/http-argv.js';
import { register } from '../../src/cli/commands/http.js';
import { MCPTAP } from '../helpers/paths.js';
import { timeoutFlagMs } from '../../src/cli/upstream.js';

/** The `http` command as main.ts builds it, its action replaced by one that keeps the flags. */
function httpCommand(): { program: Command; http: Command; read: () => unknown } {
  const program = new Command('mcptap').enablePositionalOptions().exitOverride();
  const silent = { writeOut: () => {}, writeErr: () => {} };
  program.configureOutput(silent);
  register(program);
  const http = program.commands.find((c) => c.name() === 'http')!;
  let flags: unknown;
  http.configureOutput(silent).action((f: unknown) => {
    flags = f;
  });
  return { program, http, read: () => flags };
}

/** What commander makes of `argv` (without node and the script): the action's flags, or its error's code. */
function commanderRead(argv: readonly string[]): { flags: unknown } | { error: string } {
  const { program, read } = httpCommand();
  try {
    program.parse(['node', 'mcptap', ...argv]);
  } catch (err) {
    if (err instanceof CommanderError) return { error: err.code };
    throw err;
  }
  return { flags: read() };
}

const UP = 'http://127.0.0.1:3001/mcp';

describe('the fast reader of mcptap http', () => {
  it('reads the lines it takes as commander does, defaults included', () => {
    for (const argv of [
      ['http', '--upstream', UP],
      ['http', '--upstream', UP, '--listen', '127.0.0.1:0', '--record', 'tap.db'],
      ['http', `--upstream=${UP}`, '--listen=7179', '--record=', '--require-recording'],
      ['http', '--record', '--upstream', '--upstream', UP], // a value is the next argument, whatever it looks like
      ['http', '--upstream', 'a', '--upstream', UP, '--listen', 'x', '--listen', '[::1]:80'], // the last one wins
      ['http', '--upstream', UP, '--allowed-host', 'a', '--allowed-host=b', '--allowed-origin', 'http://o', '--redact-header', 'X-Key'],
      ['http', '--upstream', UP, '--log-level', 'debug', '--log-level=silent', '--otlp', 'http://c:4318', '--metrics', ':0', '--service-name', 's'],
      ['http', '--upstream', UP, '--capture-content', '--inject-trace-context', '--capture-content', '--redact', 'rules.yaml'],
      ['http', '--upstream', UP, '--connect-timeout', '1', '--response-timeout', '0', '--idle-timeout', '2', '--max-body', 'x', '--max-header', '-1'],
      ['http', '--upstream', UP, '--header-timeout', '3', '--request-timeout', '4', '--drain-timeout', '=5', '--listen', '-h'],
      ['http', '--upstream', ''],
    ]) {
      const fast = readHttpArgv(argv);
      expect(fast, argv.join(' ')).toBeDefined();
      expect(commanderRead(argv), argv.join(' ')).toEqual({ flags: fast });
    }
  });

  it('leaves to commander what it refuses or answers itself', () => {
    for (const argv of [
      ['http'],
      ['http', '-h'],
      ['http', '--help'],
      ['http', '--upstream', UP, '--help'],
      ['http', '--upstream', UP, '-V'],
      ['http', '--upstream', UP, '--bogus'],
      ['http', '--upstream', UP, 'extra'],
      ['http', '--upstream', UP, '--record'],
      ['http', '--upstream', UP, '--require-recording=yes'],
      ['http', '--upstream', UP, '--log-level', 'loud'],
      ['http', '--upstream', UP, '--log-level', 'loud', '--log-level', 'warn'],
      ['http', '--upstream', UP, '--Listen', 'x'],
      ['http', '--upstream', UP, '--listen:x'],
      ['http', '--listen', '7179'],
      ['--version', 'http', '--upstream', UP],
      ['stdio', '--', 'srv'],
    ]) {
      expect(readHttpArgv(argv), argv.join(' ')).toBeUndefined();
      if (argv[0] === 'http' && !argv.includes('-h') && !argv.includes('--help')) expect(commanderRead(argv), argv.join(' ')).toHaveProperty('error');
    }
    // A `--` commander would take (with nothing after it); the reader need not.
    expect(readHttpArgv(['http', '--upstream', UP, '--'])).toBeUndefined();
  });

  it('agrees with commander on generated lines (fixed seed): takes a line only as commander reads it', () => {
    const values = [UP, '', '-', '--', '-h', '--help', '--listen', '--upstream', 'x=y', 'debug', 'loud', '7179', 'tap.db'];
    const known = Object.keys(HTTP_OPTIONS);
    const unknown = ['--help', '-h', '--bogus', '--', '-V', 'extra', '--no-record', '--listen=', '--log-level=loud'];
    let seed = 18;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n); // the high bits: the low ones of this generator cycle fast
    };
    let taken = 0;
    let refused = 0;
    for (let line = 0; line < 3000; line++) {
      const argv = ['http'];
      const upstreamFirst = next(4);
      for (let n = next(5); n > 0; n--) {
        const option = known[next(known.length)]!;
        const value = values[next(values.length)]!;
        // Mostly well formed for the option's kind; one in ten anything.
        const form = next(10) === 0 ? next(4) : HTTP_OPTIONS[option] === 'flag' ? 0 : 1 + next(2);
        if (form === 0) argv.push(option);
        else if (form === 1) argv.push(option, value);
        else if (form === 2) argv.push(`${option}=${value}`);
        else argv.push(unknown[next(unknown.length)]!);
      }
      // --upstream (required) first, last, or not at all.
      if (upstreamFirst === 1) argv.splice(1, 0, '--upstream', UP);
      else if (upstreamFirst > 1) argv.push(`--upstream=${UP}`);
      const fast = readHttpArgv(argv);
      const theirs = commanderRead(argv);
      if (fast === undefined) {
        refused++;
        continue;
      }
      taken++;
      expect(theirs, argv.join(' ')).toEqual({ flags: fast });
    }
    // Both kinds of line are exercised.
    expect(taken).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });

  it("knows every option of the http command, how it is read, and commander's default", () => {
    const { http } = httpCommand();
    const kind = (o: Option) => (!o.required && !o.optional ? 'flag' : Array.isArray(o.defaultValue) ? 'repeatable' : 'value');
    expect(Object.fromEntries(http.options.map((o) => [o.long, kind(o)]))).toEqual(HTTP_OPTIONS);
    const defaults = Object.fromEntries(http.options.filter((o) => typeof o.defaultValue === 'string').map((o) => [o.long, o.defaultValue]));
    expect(defaults).toEqual(HTTP_DEFAULTS);
    // Only long options: a short one would be read as unknown and left to commander.
    expect(http.options.filter((o) => o.short)).toEqual([]);
  });
});

describe('mcptap http lines left to commander, through the built CLI', () => {
  it('help, unknown options, a missing --upstream and a bad --log-level end as before', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [MCPTAP, 'http', ...args], { encoding: 'utf8', timeout: 60_000 });
    const help = run('--upstream', UP, '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: mcptap http [options]');
    for (const [args, says] of [
      [['--upstream', UP, '--bogus'], "error: unknown option '--bogus'"],
      [['--listen', '7179'], "error: required option '--upstream <url>' not specified"],
      [['--upstream', UP, '--log-level', 'loud'], "argument 'loud' is invalid"],
      [['--upstream', UP, 'extra'], 'error: too many arguments'],
    ] as const) {
      const r = run(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(says);
    }
  });

  it('timeouts take ms, or a duration with its unit', () => {
    expect(timeoutFlagMs('--connect-timeout', '250', false)).toBe(250);
    expect(timeoutFlagMs('--connect-timeout', '5s', false)).toBe(5000);
    expect(timeoutFlagMs('--idle-timeout', '1.5m', true)).toBe(90_000);
    expect(timeoutFlagMs('--idle-timeout', '0', true)).toBe(0);
    expect(() => timeoutFlagMs('--connect-timeout', '0', false)).toThrow(/positive integer/);
    expect(() => timeoutFlagMs('--connect-timeout', '5 parsecs', false)).toThrow(/a duration such as 5s/);
  });

  it('a URL without its scheme and a timeout that is no duration are refused with the fix (exit 2)', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [MCPTAP, 'http', ...args], { encoding: 'utf8', timeout: 60_000 });
    for (const [args, says] of [
      [
        ['--upstream', 'localhost:3001/mcp?token=s3cret'],
        '--upstream must be an http(s) URL, got "localhost:3001/mcp" without a scheme: try http://localhost:3001/mcp',
      ],
      [['--upstream', UP, '--otlp', 'localhost:4318'], 'try http://localhost:4318'],
      [['--upstream', UP, '--connect-timeout', 'soon'], '--connect-timeout must be a number of ms or a duration such as 5s or 250ms, got "soon"'],
      [['--upstream', UP, '--connect-timeout', '0s'], '--connect-timeout must be a number of ms'],
    ] as const) {
      const r = run(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(says);
      expect(r.stderr).not.toContain('s3cret');
    }
  });
});
