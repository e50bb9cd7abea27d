/**
 * Rewrites a recording file through a redactor (`mcptap redact`), so that nothing of what it
 * redacts is left anywhere in the file's bytes, and nothing is lost if the process dies on the way.
 * Beside recording-store.ts, the one other module that runs SQL: a whole-file operation.
 *
 * Steps (each a point where a crash leaves the original as it was, openable):
 * 1. `lock`: the original is opened in EXCLUSIVE locking mode; a tap's indexer, which holds the
 *    file open while it records, makes that fail (SQLITE_BUSY): the file is in use. The lock is
 *    kept to the end, so no tap starts writing meanwhile.
 * 2. `copied`: `VACUUM INTO` a work file beside it; every row is rewritten there (in one
 *    transaction, with secure_delete on).
 * 3. `written`: `VACUUM INTO` a fresh file from the work file: only live rows, no freed pages, no
 *    journal, so no old bytes; switched to WAL like any recording, fsynced. The work file is deleted.
 * 4. `checkpointed`: the original's WAL is checkpointed into it and truncated, so no -wal file of
 *    the old content outlives it (nor is applied to the new file).
 * 5. `renamed`: the fresh file is renamed over the original (atomic), and the directory fsynced.
 */
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { McptapError } from '../errors.js';
import type { Redactor } from '../redact/redactor.js';
import { checkIsRecording } from './migrations/file-check.js';

export type RewriteStep = 'lock' | 'copied' | 'redacted' | 'written' | 'checkpointed' | 'renamed';

export interface RewriteOptions {
  /** Rows done of all rows, now and then (about every {@link PAGE} rows). */
  onProgress?: (done: number, total: number) => void;
  /** Called after each step (tests use it to stop the process there). */
  afterStep?: (step: RewriteStep) => void;
}

export interface RewriteResult {
  rows: number;
  changed: number;
}

type Kind = 'text' | 'json' | 'message' | 'frame' | 'context';

/** Every column that can hold what a tap saw, with how to redact it. Keys, ids and methods are left alone. */
const COLUMNS: readonly [table: string, column: string, kind: Kind][] = [
  ['recordings', 'target', 'text'],
  ['connections', 'target', 'text'],
  ['connections', 'peer_json', 'json'],
  ['frames', 'raw', 'frame'],
  ['frames', 'detail', 'text'],
  ['frames', 'context_json', 'context'],
  ['exchanges', 'request_json', 'message'],
  ['exchanges', 'response_json', 'message'],
  ['exchanges', 'started_json', 'json'],
  ['exchanges', 'progress_json', 'json'],
  ['exchanges', 'transport_json', 'json'],
  ['exchanges', 'target', 'text'],
  ['exchanges', 'error_message', 'text'],
  ['exchanges', 'cancel_reason', 'text'],
  ['progress', 'message', 'text'],
  ['anomalies', 'detail', 'text'],
];

/** Rows read and written per statement. */
const PAGE = 1000;

export function rewriteRecording(path: string, redactor: Redactor, opts: RewriteOptions = {}): RewriteResult {
  const step = (s: RewriteStep) => opts.afterStep?.(s);
  const original = lockOriginal(path);
  const tmp = (what: string) => join(dirname(path), `.${basename(path)}.${what}-${randomBytes(4).toString('hex')}`);
  const work = tmp('redact');
  const fresh = tmp('redacted');
  try {
    removeLeftovers(path);
    step('lock');
    // Both copies are readable by the owner alone until the result takes the original's mode.
    createPrivate(work);
    createPrivate(fresh);
    original.prepare('VACUUM INTO ?').run(work);
    step('copied');
    const result = redactRows(work, redactor, opts.onProgress);
    step('redacted');
    writeFresh(work, fresh);
    step('written');
    chmodSync(fresh, statSync(path).mode & 0o7777);
    original.pragma('wal_checkpoint(TRUNCATE)');
    original.close();
    step('checkpointed');
    renameSync(fresh, path);
    // A -shm left beside it holds no content (page numbers of a WAL that is gone): the next
    // connection, finding no other, rebuilds it. Deleting it could pull it from under a new one.
    syncPath(dirname(path));
    step('renamed');
    return result;
  } catch (err) {
    if (err instanceof McptapError) throw err;
    throw new McptapError('MCPTAP_REDACT_REWRITE_FAILED', `cannot redact ${path}: ${(err as Error).message}; the recording is unchanged`);
  } finally {
    if (original.open) original.close();
    for (const f of [work, `${work}-journal`, fresh, `${fresh}-journal`, `${fresh}-wal`, `${fresh}-shm`]) rmSync(f, { force: true });
  }
}

/** The original, opened and locked for the whole rewrite; refused when a tap is writing it. */
function lockOriginal(path: string): Database {
  if (!existsSync(path)) throw new McptapError('MCPTAP_RECORDING_NOT_FOUND', `no such recording file: ${path}`);
  const db = new BetterSqlite3(path, { fileMustExist: true, timeout: 0 });
  try {
    checkIsRecording(db, path, false);
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY')
      throw new McptapError(
        'MCPTAP_REDACT_RECORDING_IN_USE',
        `${path} is in use: a tap (or another mcptap command) has it open; redact it once the tap has ended`,
      );
    throw err;
  }
}

/** Work files of a rewrite that died (this process holds the lock now: no other rewrite runs). */
function removeLeftovers(path: string): void {
  const prefix = `.${basename(path)}.`;
  for (const name of readdirSync(dirname(path))) {
    if (name.startsWith(prefix) && /\.(redact|redacted)-[0-9a-f]{8}(-journal|-wal|-shm)?$/.test(name)) rmSync(join(dirname(path), name), { force: true });
  }
}

function redactRows(work: string, redactor: Redactor, onProgress: RewriteOptions['onProgress']): RewriteResult {
  const db = new BetterSqlite3(work, { fileMustExist: true });
  try {
    db.pragma('secure_delete = ON');
    const present = COLUMNS.filter(([t, c]) => (db.prepare(`SELECT count(*) n FROM pragma_table_info(?) WHERE name = ?`).get(t, c) as { n: number }).n > 0);
    const tables = [...new Set(present.map(([t]) => t))];
    const total = tables.reduce((n, t) => n + (db.prepare(`SELECT count(*) n FROM ${t}`).get() as { n: number }).n, 0);
    let done = 0;
    let changed = 0;
    db.transaction(() => {
      for (const table of tables) {
        const cols = present.filter(([t]) => t === table);
        const names = cols.map(([, c]) => c);
        const extra = table === 'frames' ? ', kind' : '';
        const read = db.prepare(`SELECT rowid AS _id, ${names.join(', ')}${extra} FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ${PAGE}`);
        const write = db.prepare(`UPDATE ${table} SET ${names.map((c) => `${c} = ?`).join(', ')} WHERE rowid = ?`);
        for (let after = Number.MIN_SAFE_INTEGER; ;) {
          const page = read.all(after) as Record<string, unknown>[];
          if (page.length === 0) break;
          for (const row of page) {
            const values = cols.map(([, c, kind]) => redactCell(redactor, kind, row[c], row.kind));
            if (values.some((v, i) => v !== row[names[i]!])) {
              write.run(...values, row._id);
              changed++;
            }
          }
          after = page[page.length - 1]!._id as number;
          done += page.length;
          onProgress?.(done, total);
        }
      }
    })();
    return { rows: total, changed };
  } finally {
    db.close();
  }
}

/** One cell redacted; the same value (same object) when nothing in it changed. */
export function redactCell(r: Redactor, kind: Kind, v: unknown, frameKind?: unknown): unknown {
  if (v === null || v === undefined || v === '') return v;
  if (kind === 'frame') {
    const raw = v as Buffer;
    if (frameKind === 'message') return sameOr(raw, r.redactRaw(raw));
    const text = raw.toString('utf8');
    const out = r.redactText(text);
    return out === text ? raw : Buffer.from(out, 'utf8');
  }
  const text = String(v);
  if (kind === 'text') return sameOr(v, r.redactText(text));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return sameOr(v, r.redactText(text));
  }
  let out: unknown;
  if (kind === 'message') out = r.redactJson(parsed);
  else if (kind === 'context') {
    const ctx = parsed as { headers?: Record<string, string | string[]> } | null;
    out = ctx?.headers ? { ...ctx, headers: r.redactHeaders(ctx.headers) } : ctx;
    if (ctx?.headers && JSON.stringify(out) === text) out = parsed;
  } else out = r.redactJson(parsed, ['']); // not a message: the paths do not apply, fields and patterns do
  return out === parsed ? v : JSON.stringify(out);
}

function sameOr<T>(before: T, after: T): T {
  if (Buffer.isBuffer(before) && Buffer.isBuffer(after)) return before.equals(after) ? before : after;
  return before === after ? before : after;
}

/** `VACUUM INTO` a new file (no freed pages, no journal), in WAL mode like a recording, on disk. */
function writeFresh(work: string, fresh: string): void {
  const db = new BetterSqlite3(work, { fileMustExist: true });
  try {
    db.prepare('VACUUM INTO ?').run(fresh);
  } finally {
    db.close();
  }
  rmSync(work, { force: true });
  const out = new BetterSqlite3(fresh, { fileMustExist: true });
  try {
    out.pragma('journal_mode = WAL');
  } finally {
    out.close();
  }
  syncPath(fresh);
}

/** An empty file only its owner can read (`VACUUM INTO` writes into an empty file). */
function createPrivate(p: string): void {
  closeSync(openSync(p, 'wx', 0o600));
}

function syncPath(p: string): void {
  const fd = openSync(p, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
