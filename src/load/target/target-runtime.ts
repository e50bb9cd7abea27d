/**
 * Bringing a scenario's target up and down. A URL is used as is; a stdio command is spawned by the
 * stdio driver; the bundled reference server runs in a child process (HTTP: it prints its URL;
 * stdio: it becomes the stdio command), or in process when `inProcess` is set.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { McptapError } from '../../errors.js';
import type { TargetSpec } from '../scenario/scenario.js';
import { compiledModule } from '../../util/thread-entry.js';

export type RunningTarget = (
  | { kind: 'http'; url: string; headers: Record<string, string>; connections?: number }
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string; pool: number }
) & {
  description: string;
  /** Reference server: epoch ms its stall schedule is anchored at. */
  startedAtEpochMs?: number;
  close(): Promise<void>;
};

const noop = async () => {};

export async function startTarget(spec: TargetSpec): Promise<RunningTarget> {
  if (spec.kind === 'http') return { ...spec, description: spec.url, close: noop };
  if (spec.kind === 'stdio') return { ...spec, description: [spec.command, ...spec.args].join(' '), close: noop };
  const stallArgs = [...(spec.ignoreCancel ? ['--ignore-cancel'] : []), ...(spec.stall ? [String(spec.stall.everyMs), String(spec.stall.forMs)] : [])];
  if (spec.transport === 'stdio') {
    const [command, ...prefix] = childCommand();
    return {
      kind: 'stdio',
      command: command!,
      args: [...prefix, 'stdio', ...stallArgs],
      env: {},
      pool: spec.pool,
      description: 'reference server (stdio)',
      close: noop,
    };
  }
  if (spec.inProcess) {
    // Loaded here: the SDK server costs a CLI that runs no in-process reference half a second of start-up.
    const { startReferenceHttpServer } = await import('../../reference/reference-http-server.js');
    const s = await startReferenceHttpServer({ port: 0, stall: spec.stall, ...(spec.ignoreCancel ? { honorCancel: false } : {}) });
    return { kind: 'http', url: s.url, headers: {}, description: `reference server ${s.url}`, startedAtEpochMs: s.startedAtEpochMs, close: () => s.close() };
  }
  return startReferenceChild(stallArgs);
}

/** `node reference-child.js` (the fresh build's, from the sources), else `node --import tsx reference-child.ts`. */
function childCommand(): string[] {
  const here = import.meta.url;
  const compiled = compiledModule(here, 'reference-child');
  if (compiled) return [process.execPath, fileURLToPath(compiled)];
  const tsx = pathToFileURL(createRequire(here).resolve('tsx')).href;
  return [process.execPath, '--import', tsx, fileURLToPath(new URL('./reference-child.ts', here))];
}

async function startReferenceChild(stallArgs: string[]): Promise<RunningTarget> {
  const [command, ...prefix] = childCommand();
  // A group of its own: a Ctrl-C at the terminal stops the run gracefully, and the server must
  // outlive it until the requests in flight end (it exits when its stdin does, so never orphaned).
  const child = spawn(command!, [...prefix, 'http', ...stallArgs], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  const info = await new Promise<{ url: string; startedAtEpochMs: number }>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(unavailable('did not report its URL within 20 s')), 20_000);
    child.stdout!.on('data', (b: Buffer) => {
      buf += b.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(buf.slice(0, nl)) as { url: string; startedAtEpochMs: number });
      } catch {
        reject(unavailable(`printed something unexpected: ${buf.slice(0, 200)}`));
      }
    });
    child.once('error', (e) => reject(unavailable(e.message)));
    child.once('exit', (code) => reject(unavailable(`exited with code ${code}`)));
  });
  const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  return {
    kind: 'http',
    url: info.url,
    headers: {},
    description: `reference server ${info.url}`,
    startedAtEpochMs: info.startedAtEpochMs,
    close: async () => {
      child.stdin!.end();
      const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(kill);
    },
  };
}

function unavailable(why: string): McptapError {
  return new McptapError('MCPTAP_LOAD_REFERENCE_FAILED', `the bundled reference server ${why}`);
}
