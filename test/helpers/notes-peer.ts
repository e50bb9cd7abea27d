/**
 * The SDK 1.x notes server (test/fixtures/notes-server.mjs) as a real peer: its stdio command, or
 * the server over Streamable HTTP as a child process on a free loopback port (started within 20 s).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { FIXTURES } from './paths.js';
import { exitOf, signalAndWait } from './signal-child.js';

export const NOTES_SERVER = join(FIXTURES, 'notes-server.mjs');

/** The stdio command: node, the server and its flags. */
export const notesCommand = (flags: string[] = []): string[] => [process.execPath, NOTES_SERVER, ...flags];

export interface NotesHttp {
  url: string;
  stop(): Promise<void>;
}

export async function startNotesHttp(flags: string[] = []): Promise<NotesHttp> {
  const child = spawn(process.execPath, [NOTES_SERVER, '--http', '0', ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`notes server did not start: ${text}`)), 20_000);
    child.stderr!.on('data', (b: Buffer) => {
      text += b.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`notes server exited (${code}): ${text}`));
    });
  });
  const exited = exitOf(child);
  return {
    url,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) await signalAndWait(child, exited, 'SIGKILL');
    },
  };
}
