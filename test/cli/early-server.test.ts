/**
 * `mcptap stdio` spawns the server before loading the rest of mcptap (cli/early-server.ts): which
 * command lines it reads, that the option lists follow the stdio command's, that a server nobody
 * takes is killed, and, through the built CLI (requires `npx tsc -p .`), that bad flags are still
 * refused as before and what the server wrote before the tap was up reaches the host in order.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  dropEarlyServer,
  spawnStdioServerEarly,
  STDIO_FLAG_OPTIONS,
  STDIO_VALUE_OPTIONS,
  stdioServerCommand,
  takeEarlyServer,
} from '../../src/cli/early-server.js';
import { register } from '../../src/cli/commands/stdio.js';
import { MCPTAP } from '../helpers/paths.js';

describe('stdioServerCommand', () => {
  it('reads the server command as commander does', () => {
    expect(stdioServerCommand(['stdio', '--', 'node', 'server.js', '--verbose'])).toEqual({ command: 'node', args: ['server.js', '--verbose'] });
    expect(stdioServerCommand(['stdio', 'node', 'server.js', '--', 'x'])).toEqual({ command: 'node', args: ['server.js', '--', 'x'] });
    expect(stdioServerCommand(['stdio', '--record', 'tap.db', '--otlp=http://h:4318', '--require-recording', '--', 'srv'])).toEqual({
      command: 'srv',
      args: [],
    });
    // A required value is the next argument, whatever it looks like.
    expect(stdioServerCommand(['stdio', '--record', '--', '--', 'srv'])).toEqual({ command: 'srv', args: [] });
    expect(stdioServerCommand(['stdio', '--log-level', 'debug', 'srv', '-x'])).toEqual({ command: 'srv', args: ['-x'] });
  });

  it('spawns nothing when in doubt: help, unknown options, no command, other commands', () => {
    for (const argv of [
      ['stdio', '-h', '--', 'srv'],
      ['stdio', '--help'],
      ['stdio', '--bogus', '--', 'srv'],
      ['stdio', '--require-recording=yes', '--', 'srv'],
      ['stdio', '--record', 'tap.db'],
      ['stdio', '--', ''],
      ['stdio', '--', '  '],
      ['stdio', '--record'],
      ['http', '--', 'srv'],
      ['--version', 'stdio', '--', 'srv'],
      [],
    ])
      expect(stdioServerCommand(argv), argv.join(' ')).toBeUndefined();
  });

  it('knows every option of the stdio command, and whether it takes a value', () => {
    const program = new Command('mcptap').enablePositionalOptions();
    register(program);
    const stdio = program.commands.find((c) => c.name() === 'stdio')!;
    const valued = stdio.options.filter((o) => o.required || o.optional).map((o) => o.long);
    const flags = stdio.options.filter((o) => !o.required && !o.optional).map((o) => o.long);
    expect(valued.length + flags.length).toBeGreaterThan(5);
    expect(new Set(valued)).toEqual(STDIO_VALUE_OPTIONS);
    expect(new Set(flags)).toEqual(STDIO_FLAG_OPTIONS);
    // Only long options: a short one would be read as unknown, and nothing spawned early.
    expect(stdio.options.filter((o) => o.short)).toEqual([]);
  });

  it('spawns early for every option of the stdio command, reading a value only where it takes one', () => {
    const program = new Command('mcptap').enablePositionalOptions();
    register(program);
    const stdio = program.commands.find((c) => c.name() === 'stdio')!;
    expect(stdio.options.length).toBeGreaterThan(5);
    for (const o of stdio.options) {
      const name = o.long!;
      if (o.required || o.optional) {
        // `--x srv tool`: srv is the option's value and tool the command; with `=`, srv is the command.
        expect(stdioServerCommand(['stdio', name, 'srv', 'tool']), name).toEqual({ command: 'tool', args: [] });
        expect(stdioServerCommand(['stdio', `${name}=v`, 'srv', 'tool']), name).toEqual({ command: 'srv', args: ['tool'] });
      } else {
        expect(stdioServerCommand(['stdio', name, 'srv', 'tool']), name).toEqual({ command: 'srv', args: ['tool'] });
      }
    }
  });
});

describe('the server spawned early', () => {
  const sleeper = ['stdio', '--', process.execPath, '-e', 'setInterval(() => {}, 1000)'];

  it('is killed when nobody takes it', async () => {
    const server = spawnStdioServerEarly(sleeper)!;
    expect(server.command).toBe(process.execPath);
    await server.started;
    const exited = once(server.child, 'exit');
    dropEarlyServer();
    expect(await exited).toEqual([null, 'SIGKILL']);
  });

  it('is handed over once to the command it runs, and killed when another is asked for', async () => {
    const server = spawnStdioServerEarly(sleeper)!;
    expect(takeEarlyServer(process.execPath, ['-e', 'other'])).toBeUndefined();
    expect(await once(server.child, 'exit')).toEqual([null, 'SIGKILL']);

    const again = spawnStdioServerEarly(sleeper)!;
    expect(takeEarlyServer(process.execPath, ['-e', 'setInterval(() => {}, 1000)'])).toBe(again);
    expect(takeEarlyServer(process.execPath, ['-e', 'setInterval(() => {}, 1000)'])).toBeUndefined();
    dropEarlyServer(); // taken: no longer ours to kill
    expect(again.child.exitCode).toBeNull();
    again.child.kill('SIGKILL');
    await once(again.child, 'exit');
  });

  it('reports a command that cannot start when the tap takes it', async () => {
    const server = spawnStdioServerEarly(['stdio', '--', '/nonexistent/mcptap-server'])!;
    await expect(server.started).rejects.toThrow(/cannot start server "\/nonexistent\/mcptap-server": command not found/);
    expect(takeEarlyServer('/nonexistent/mcptap-server', [])).toBe(server);
  });
});

/** Runs the built CLI with `stdin` as the host's input; resolves with what it wrote and its exit. */
async function run(args: string[], stdin: string): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const child = spawn(process.execPath, [MCPTAP, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdin.end(stdin);
  const [code] = (await once(child, 'close')) as [number | null];
  return { stdout, stderr, code };
}

describe('mcptap stdio with the server spawned early', () => {
  // Writes a line at once, before reading anything, then echoes its input.
  const eager = [process.execPath, '-e', "process.stdout.write('first\\n'); process.stderr.write('server log\\n'); process.stdin.pipe(process.stdout)"];

  it('forwards what the server wrote before the tap was up, then the traffic, in order', async () => {
    const r = await run(['stdio', '--', ...eager], 'a\nb\n');
    expect(r.stdout).toBe('first\na\nb\n');
    expect(r.stderr).toBe('server log\n');
    expect(r.code).toBe(0);
  });

  it('passes on the output and exit code of a server that exits before the tap is up', async () => {
    // /bin/sh exits within milliseconds, long before mcptap has loaded its pipeline: Node drains an
    // exited child's unread pipes, and its 'close' came before the tap listened (it used to exit 13, mute).
    const r = await run(['stdio', '--', '/bin/sh', '-c', 'echo out; echo err >&2; exit 9'], '');
    expect(r).toEqual({ stdout: 'out\n', stderr: 'err\n', code: 9 });
    const quiet = await run(['stdio', '--', '/bin/sh', '-c', 'exit 0'], '');
    expect(quiet).toEqual({ stdout: '', stderr: '', code: 0 });
  });

  it('refuses bad flags as before (usage, exit 2), and nothing of the server reaches the host', async () => {
    const bad = await run(['stdio', '--log-level', 'loud', '--', ...eager], 'a\n');
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(
      "error: option '--log-level <level>' argument 'loud' is invalid. Allowed choices are debug, info, warn, error, silent.\n(run with --help for usage)\n",
    );
    // A --metrics port already taken: refused before any byte passes, not later with the recording lost.
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-early-'));
    try {
      const busy = await run(['stdio', '--metrics', `127.0.0.1:${port}`, '--record', join(dir, 'tap.db'), '--', ...eager], 'a\n');
      expect(busy).toEqual({
        stdout: '',
        stderr: `mcptap: --metrics 127.0.0.1:${port}: cannot listen (EADDRINUSE): another process has the port, pick another (or port 0 for a free one)\n`,
        code: 2,
      });
    } finally {
      taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const late = await run(['stdio', '--max-line-bytes', '0', '--', ...eager], 'a\n');
    expect(late.code).toBe(2);
    expect(late.stdout).toBe('');
    expect(late.stderr).toBe('mcptap: --max-line-bytes must be a positive integer, got "0"\n');
  });
});
