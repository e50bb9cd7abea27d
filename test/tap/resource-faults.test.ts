/**
 * Resource faults while `mcptap stdio --record` runs (issue 22): the recording's disk full (a real
 * ENOSPC: a 3 MiB tmpfs mounted for the test, skipped where mount is not permitted), the recording
 * file deleted or made read-only, and the OTLP endpoint down, hanging or slow for the
 * whole run. In every case the traffic keeps flowing (every call answered), the loss is counted
 * and said once on stderr, and a recording that lacks forwarded traffic exits 1, with or without
 * `--require-recording` (which also stops the server at the first loss); else the server's own 0.
 *
 * The built CLI in front of a 10 KB echo server (bench/fixtures/echo-server.mjs). The hanging and
 * slow OTLP endpoints are in-process fakes (a real collector does that only when broken).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP, ROOT } from '../helpers/paths.js';

const ECHO = join(ROOT, 'bench', 'fixtures', 'echo-server.mjs');
const dirs: string[] = [];
const mounts: string[] = [];
afterAll(() => {
  // Unmount first: removing a directory still mounted fails with EBUSY.
  for (const m of mounts) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'mcptap-fault-'));
  dirs.push(d);
  return d;
}

interface TapRun {
  code: number | null;
  answered: number;
  stderr: string;
}

/**
 * Sends `calls` requests through the tap (`payload`-byte answers), in rounds of 100; `midway` runs
 * once half were answered. Ends stdin once all are answered (the server exits, the tap closes).
 */
function runTap(
  db: string,
  flags: string[],
  calls: number,
  opts: { payload?: number; midway?: () => Promise<void> | void; uid?: number; env?: Record<string, string> } = {},
): Promise<TapRun> {
  const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, ...flags, '--', process.execPath, ECHO], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PAYLOAD: String(opts.payload ?? 10_000), ...opts.env },
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}),
  });
  let stderr = '';
  let answered = 0;
  let sent = 0;
  let midwayDone = false;
  /** Sending waits while `midway` runs. */
  let paused = false;
  tap.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  tap.stdin.on('error', () => {});
  const more = () => {
    if (paused) return;
    let batch = '';
    while (sent < calls && sent - answered < 100) batch += `{"jsonrpc":"2.0","id":${++sent},"method":"tools/call","params":{"name":"echo"}}\n`;
    if (batch) tap.stdin.write(batch);
  };
  tap.stdout.on('data', (b: Buffer) => {
    for (const c of b) if (c === 10) answered++;
    if (!midwayDone && answered >= calls / 2 && opts.midway) {
      midwayDone = true;
      paused = true;
      void Promise.resolve(opts.midway()).then(() => {
        paused = false;
        more();
      });
    }
    if (answered >= calls) tap.stdin.end();
    else more();
  });
  more();
  return new Promise((resolve) => tap.once('exit', (code) => resolve({ code, answered, stderr })));
}

/** How many lines of `text` match `re`. */
const linesMatching = (text: string, re: RegExp) => text.split('\n').filter((l) => re.test(l)).length;

/** A tmpfs of `size` at a new directory (removed after the tests), or undefined where mount is not permitted. */
function smallFs(size: string): string | undefined {
  const dir = tempDir();
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' }).status === 0;
  if (!mounted) return undefined;
  mounts.push(dir);
  return dir;
}

const canMount = (() => {
  const probe = mkdtempSync(join(tmpdir(), 'mcptap-mount-'));
  const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' }).status === 0;
  if (ok) spawnSync('umount', [probe], { stdio: 'ignore' });
  rmSync(probe, { recursive: true, force: true });
  if (!ok) console.warn('resource-faults: mount is not permitted here (not root?): the disk-full and read-only tests are skipped');
  return ok;
})();

describe('the recording disk full (a 3 MiB tmpfs: real ENOSPC)', () => {
  for (const required of [false, true]) {
    it.skipIf(!canMount)(
      `traffic flows, the loss is counted and said once; exit 1${required ? ' with --require-recording' : ' (the recording lacks traffic)'}`,
      async () => {
        const dir = smallFs('3m')!;
        const db = join(dir, 'rec.db');
        // 1,000 answers of 10 KB: several times what the filesystem holds.
        const run = await runTap(db, required ? ['--require-recording'] : [], 1000);
        // --require-recording stops the server once a write fails: when the indexer hits the full
        // disk before the traffic ends, the rest goes unanswered. Without it, every call is answered.
        if (required) expect(run.answered, run.stderr).toBeGreaterThan(0);
        else expect(run.answered, run.stderr).toBe(1000);
        expect(run.code, run.stderr).toBe(1);
        expect(linesMatching(run.stderr, /disk is full/), run.stderr).toBeGreaterThanOrEqual(1);
        const lacks =
          /recording \S+rec\.db lacks (?:\d+ bytes and )?(\d+) events \(not written: see above\) of the traffic the tap forwarded; exit code 1/.exec(
            run.stderr,
          );
        expect(lacks, run.stderr).not.toBeNull();
        console.log(`disk full${required ? ', --require-recording' : ''}: ${run.answered} answered; the tap said the recording lacks ${lacks![1]} events`);
        expect(linesMatching(run.stderr, /recorder write of \d+ events failed: database or disk is full/), run.stderr).toBe(1);
        expect(run.stderr).toMatch(/recording .*rec\.db: \d+ events dropped \(0 queue full, \d+ write failures\)/);
        if (required) expect(run.stderr).toMatch(/recording failed and --require-recording is set/);
        // What fitted is readable, and says what it lacks: the drops counted in its end, or, when the
        // full disk refused the end too, no end at all (`ls` shows it unfinished; the tap said so).
        const store = RecordingStore.open(db);
        try {
          const r = store.listRecordings()[0]!;
          if (r.endedUs === undefined) expect(run.stderr).toMatch(/could not write the end of recording/);
          else expect(r.droppedWrite).toBeGreaterThan(0);
        } finally {
          store.close();
        }
      },
      120_000,
    );
  }
});

describe("the spool's disk full (MCPTAP_SPOOL_DIR on a 1 MiB tmpfs: real ENOSPC at the spool's write)", () => {
  it.skipIf(!canMount)(
    'traffic flows, the bytes that could not be spooled are said; exit 1',
    async () => {
      const spoolDir = smallFs('1m')!;
      const db = join(tempDir(), 'rec.db');
      // A ring far larger than its filesystem, and no indexing while traffic flows: the spool file
      // grows until a write fails.
      const env = { MCPTAP_SPOOL_DIR: spoolDir, MCPTAP_SPOOL_BYTES: String(64 * 2 ** 20), MCPTAP_INDEX_LAG_MS: '600000' };
      const run = await runTap(db, [], 1000, { env });
      expect(run.answered, run.stderr).toBe(1000);
      expect(linesMatching(run.stderr, /cannot spool traffic for the recording: .*ENOSPC/), run.stderr).toBe(1);
      const lacks = /recording \S+rec\.db lacks (\d+) bytes of the traffic the tap forwarded; exit code 1/.exec(run.stderr);
      expect(lacks, run.stderr).not.toBeNull();
      expect(run.code, run.stderr).toBe(1);
      console.log(`spool disk full: ${run.answered} answered; the tap said the recording lacks ${lacks![1]} bytes`);
    },
    120_000,
  );
});

describe('the recording file deleted while the tap runs', () => {
  for (const required of [false, true]) {
    it(`traffic flows, the loss is said once; exit 1${required ? ' with --require-recording' : ' (the recording lacks traffic)'}`, async () => {
      const dir = tempDir();
      const db = join(dir, 'rec.db');
      const run = await runTap(db, required ? ['--require-recording'] : [], 1000, {
        payload: 200,
        midway: async () => {
          // Once the indexer has opened it (it does beside the traffic).
          for (let i = 0; i < 1000 && !RecordingStore.hasRecording(db); i++) await new Promise((r) => setTimeout(r, 20));
          await new Promise((r) => setTimeout(r, 200));
          rmSync(db); // the file the user named (SQLite's -wal and -shm stay)
        },
      });
      // --require-recording stops the server once the loss is seen: on a slow machine the traffic may
      // still be flowing then, and the rest goes unanswered. Without it, every call is answered.
      if (required) expect(run.answered, run.stderr).toBeGreaterThan(0);
      else expect(run.answered, run.stderr).toBe(1000);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/recording \S+rec\.db lacks .*\d+ events \(not written: see above\) of the traffic the tap forwarded; exit code 1/);
      // Said once by the recorder (SQLite itself goes on writing to the unlinked file, and says nothing).
      expect(linesMatching(run.stderr, /recorder (writes|wrote) to a file nobody can read: the recording file .*rec\.db was deleted/), run.stderr).toBe(1);
      if (required) expect(run.stderr).toMatch(/recording failed and --require-recording is set/);
      expect(existsSync(db)).toBe(false);
    }, 120_000);
  }
});

describe('the recording file made read-only while the tap runs', () => {
  // As an unprivileged user when the test runs as root (root writes whatever the mode says).
  const uid = process.getuid?.() === 0 ? 65534 : undefined;
  it('nothing is lost: descriptors opened for writing keep writing (POSIX); exit 0 with --require-recording', async () => {
    const dir = tempDir();
    chmodSync(dir, 0o777);
    const db = join(dir, 'rec.db');
    const run = await runTap(db, ['--require-recording'], 1000, {
      payload: 200,
      ...(uid !== undefined ? { uid } : {}),
      midway: async () => {
        for (let i = 0; i < 1000 && !existsSync(db); i++) await new Promise((r) => setTimeout(r, 20));
        for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o444);
      },
    });
    expect(run.answered, run.stderr).toBe(1000);
    expect(run.code, run.stderr).toBe(0);
    expect(statSync(db).mode & 0o777).toBe(0o444);
    const store = RecordingStore.open(db);
    try {
      const r = store.listRecordings()[0]!;
      expect(r.endedUs).toBeDefined();
      expect(store.exchanges({ recordingId: r.id }).filter((e) => e.outcome === 'ok')).toHaveLength(1000);
    } finally {
      store.close();
    }
  }, 120_000);
});

/** Fake faults: an endpoint that accepts and never answers, one that answers every export after 3 s. */
async function otlpEndpoint(kind: 'down' | 'hanging' | 'slow'): Promise<{ url: string; close(): void }> {
  if (kind === 'down') {
    // A port just closed: connection refused.
    const s: Server = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => s.once('listening', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    return { url: `http://127.0.0.1:${port}`, close: () => {} };
  }
  const server =
    kind === 'hanging'
      ? createServer((socket) => socket.on('data', () => {}))
      : createHttpServer((req, res) => {
          req.resume();
          setTimeout(() => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(), 3000).unref();
        });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close();
    },
  };
}

describe('the OTLP endpoint down, hanging or slow for the whole run', () => {
  for (const kind of ['down', 'hanging', 'slow'] as const) {
    it(`${kind}: traffic flows and is all recorded, undelivered spans said once; exit 0 with --require-recording`, async () => {
      const endpoint = await otlpEndpoint(kind);
      const dir = tempDir();
      mkdirSync(dir, { recursive: true });
      const db = join(dir, 'rec.db');
      try {
        const run = await runTap(db, ['--require-recording', '--otlp', endpoint.url], 3000, { payload: 200 });
        expect(run.answered, run.stderr).toBe(3000);
        // OTLP is not the recording: its loss never fails the run.
        expect(run.code, run.stderr).toBe(0);
        expect(linesMatching(run.stderr, /spans? (were )?not delivered|spans and the metrics not delivered/), run.stderr).toBe(1);
        const store = RecordingStore.open(db);
        try {
          const r = store.listRecordings()[0]!;
          expect(store.exchanges({ recordingId: r.id }).filter((e) => e.outcome === 'ok')).toHaveLength(3000);
        } finally {
          store.close();
        }
      } finally {
        endpoint.close();
      }
    }, 120_000);
  }
});
