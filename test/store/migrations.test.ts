import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McptapError } from '../../src/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { APPLICATION_ID, LATEST_SCHEMA_VERSION, MIGRATIONS, migrate, type Migration } from '../../src/store/migrations/index.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { silentLogger } from '../../src/util/logger.js';
import { EventScript, sampleEvents, T0 } from '../sinks/sample-events.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-migrate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function openError(path: string, create = false): McptapError {
  try {
    RecordingStore.open(path, { create }).close();
  } catch (err) {
    expect(err).toBeInstanceOf(McptapError);
    return err as McptapError;
  }
  throw new Error('expected open to fail');
}

describe('schema migrations', () => {
  it('creates the latest schema from an empty file, in WAL mode, stamped as mcptap', () => {
    const path = join(dir, 'new.db');
    const store = RecordingStore.open(path, { create: true });
    expect(store.db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(store.db.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    const tables = store.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => (r as { name: string }).name);
    expect(tables).toEqual(['anomalies', 'connections', 'exchanges', 'frames', 'progress', 'recordings']);
    store.close();
    // Reopening is a no-op migration.
    const again = RecordingStore.open(path);
    expect(again.listRecordings()).toEqual([]);
    again.close();
  });

  it('migrates an older file step by step and keeps its data', () => {
    const db = new BetterSqlite3(join(dir, 'old.db'));
    const v1: Migration = { version: 1, name: 'one', up: (d) => d.exec("CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('kept')") };
    const v2: Migration = { version: 2, name: 'two', up: (d) => d.exec('ALTER TABLE t ADD COLUMN b INTEGER DEFAULT 7') };
    expect(migrate(db, [v1])).toEqual({ from: 0, to: 1 });
    expect(migrate(db, [v1, v2])).toEqual({ from: 1, to: 2 });
    expect(migrate(db, [v1, v2])).toEqual({ from: 2, to: 2 });
    expect(db.prepare('SELECT a, b FROM t').all()).toEqual([{ a: 'kept', b: 7 }]);
    db.close();
  });

  it('rolls back a failing migration whole, leaving the version where it was', () => {
    const db = new BetterSqlite3(':memory:');
    const bad: Migration = { version: 1, name: 'bad', up: (d) => d.exec('CREATE TABLE t (a); CREATE TABLE t (a)') };
    expect(() => migrate(db, [bad])).toThrow(/already exists/);
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    expect(db.prepare("SELECT count(*) n FROM sqlite_master WHERE name = 't'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('creates a new file in one transaction: a reader meanwhile finds it empty (show --follow waits), never half-migrated', () => {
    const path = join(dir, 'creating.db');
    const db = new BetterSqlite3(path);
    db.pragma('journal_mode = WAL');
    const last = MIGRATIONS[MIGRATIONS.length - 1]!;
    let seen = '';
    const spy: Migration = {
      ...last,
      up: (d) => {
        // What a read-only reader (another process) sees while the last step runs.
        try {
          RecordingStore.open(path, { readOnly: true }).close();
          seen = 'opened';
        } catch (err) {
          seen = (err as Error).message;
        }
        last.up(d);
      },
    };
    migrate(db, [...MIGRATIONS.slice(0, -1), spy]);
    db.close();
    expect(seen).toMatch(/empty database/);
    expect(RecordingStore.open(path, { readOnly: true }).listRecordings()).toEqual([]);
  });

  it('refuses a file written by a newer mcptap with a clear error', () => {
    const path = join(dir, 'future.db');
    RecordingStore.open(path, { create: true }).close();
    const db = new BetterSqlite3(path);
    db.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 5}`);
    db.close();
    const err = openError(path);
    expect(err.code).toBe('MCPTAP_RECORDING_TOO_NEW');
    expect(exitCodeFor(err)).toBe(4);
    expect(err.message).toMatch(/newer mcptap/);
  });

  it('says clearly when a file is missing or not a recording (exit code 4)', () => {
    expect(openError(join(dir, 'missing.db'))).toMatchObject({ code: 'MCPTAP_RECORDING_NOT_FOUND' });
    expect(exitCodeFor(openError(join(dir, 'missing.db')))).toBe(4);
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'just some text, definitely not an SQLite database header...'.repeat(3));
    expect(openError(text)).toMatchObject({ code: 'MCPTAP_NOT_A_RECORDING' });
    expect(exitCodeFor(openError(text))).toBe(4);
    expect(openError(text, true).message).toMatch(/not an SQLite database/);
    const other = join(dir, 'other.db');
    const db = new BetterSqlite3(other);
    db.exec('CREATE TABLE users (name TEXT)');
    db.close();
    expect(openError(other, true).message).toMatch(/different SQLite database/);
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    expect(openError(empty).message).toMatch(/empty database/);
  });

  it('lists migrations without gaps', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });
});

describe('schema v2 (exchanges reference their frames)', () => {
  it('creates new files with 32 KiB pages (a frame of a few KB fits a page); existing files keep theirs', () => {
    const store = RecordingStore.open(join(dir, 'new.db'), { create: true });
    expect(store.db.pragma('page_size', { simple: true })).toBe(32 * 1024);
    store.close();
    const old = new BetterSqlite3(join(dir, 'old.db'));
    migrate(old, MIGRATIONS.slice(0, 1));
    old.close();
    const reopened = RecordingStore.open(join(dir, 'old.db'), { create: true });
    expect(reopened.db.pragma('page_size', { simple: true })).toBe(4096);
    reopened.close();
  });

  it('opens a v1 file: its exchanges read back from their own JSON, and new recordings go in beside them', async () => {
    const path = join(dir, 'v1.db');
    const db = new BetterSqlite3(path);
    db.pragma('journal_mode = WAL');
    migrate(db, MIGRATIONS.slice(0, 1));
    db.exec(`INSERT INTO recordings (id, transport, target, started_us, mcptap_version) VALUES (1, 'stdio', 'old', 1, '0.0.1');
      INSERT INTO frames (recording_id, ord, seq, connection_id, direction, channel, time_us, raw, kind, message_kind, method, id_text, id_type, exchange_key)
        VALUES (1, 1, 1, 'c', 'c2s', 'stdio', 10, CAST('{"jsonrpc":"2.0","id":1,"method":"ping"}' AS BLOB), 'message', 'request', 'ping', '1', 'number', 'c/c2s/1');
      INSERT INTO exchanges (recording_id, key, state, started_ord, completed_ord, connection_id, direction, id_text, id_type, method, era, start_us,
        end_us, latency_us, outcome, request_json, response_json, request_seq, response_seq)
        VALUES (1, 'c/c2s/1', 'completed', 2, 3, 'c', 'c2s', '1', 'number', 'ping', 'legacy', 10, 20, 10, 'ok',
        '{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":1,"result":{}}', 1, 2);`);
    db.close();
    const rec = new SqliteRecorder({
      path,
      recording: { transport: 'stdio', target: 'new', startedUs: T0, mcptapVersion: 't' },
      logger: silentLogger,
      clock: { nowUs: () => T0 },
    });
    for (const e of sampleEvents()) rec.onEvent(e);
    await rec.close();
    const store = RecordingStore.open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(store.exchange(1, '1')).toMatchObject({ method: 'ping', request: { id: 1, method: 'ping' }, response: { id: 1, result: {} }, outcome: 'ok' });
    expect([...store.events(2)]).toEqual(sampleEvents());
    store.close();
  });
});

describe('schema v3 (lean writes)', () => {
  /**
   * A v2 file as mcptap's v2 writer left it: the v3 writer's rows with every '' started_json
   * spelled out as the JSON v2 wrote (json_object gives JSON.stringify's text for these values),
   * the exchanges_method index back, and user_version 2.
   */
  async function v2File(path: string): Promise<void> {
    const rec = new SqliteRecorder({
      path,
      recording: { transport: 'stdio', target: 'old', startedUs: T0, mcptapVersion: 't' },
      logger: silentLogger,
      clock: { nowUs: () => T0 },
    });
    for (const e of sampleEvents()) rec.onEvent(e);
    await rec.close();
    const db = new BetterSqlite3(path);
    const spelled = db
      .prepare(
        `UPDATE exchanges SET started_json = json_object('outcome', 'unanswered', 'era', era, 'protocolVersion', protocol_version,
      'sessionId', session_id, 'target', target, 'operationKey', operation_key) WHERE started_json = ''`,
      )
      .run();
    expect(spelled.changes).toBeGreaterThan(0); // the v3 writer did write '' here
    db.exec('CREATE INDEX exchanges_method ON exchanges (recording_id, method, latency_us)');
    db.pragma('user_version = 2');
    db.close();
  }

  /** Everything the read API says about a recording. */
  function readAll(store: RecordingStore, id: number): unknown {
    const exchanges = store.exchanges({ recordingId: id });
    return {
      listing: store.listRecordings(),
      summary: store.summary(id),
      connections: store.connections(id),
      exchanges,
      byRef: exchanges.map((e) => [
        store.exchangesByRef(id, String(e.id)),
        store.exchange(id, `#${e.rowid}`),
        store.framesOfExchange(id, e.key),
        store.anomalies(id, { exchangeKey: e.key }),
      ]),
      anomalies: store.anomalies(id),
      frames: [...store.frames(id)],
      events: [...store.events(id)],
    };
  }

  it('migrates a v2 file: the index goes, and every read returns what it did', async () => {
    const path = join(dir, 'v2.db');
    await v2File(path);
    const asV2 = new BetterSqlite3(path, { readonly: true });
    expect(asV2.prepare("SELECT count(*) n FROM exchanges WHERE started_json = ''").get()).toEqual({ n: 0 });
    asV2.close();
    const fresh = join(dir, 'v3.db');
    const rec = new SqliteRecorder({
      path: fresh,
      recording: { transport: 'stdio', target: 'old', startedUs: T0, mcptapVersion: 't' },
      logger: silentLogger,
      clock: { nowUs: () => T0 },
    });
    for (const e of sampleEvents()) rec.onEvent(e);
    await rec.close();

    const store = RecordingStore.open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(store.db.prepare("SELECT name FROM sqlite_master WHERE name = 'exchanges_method'").get()).toBeUndefined();
    expect([...store.events(1)]).toEqual(sampleEvents());
    const v3 = RecordingStore.open(fresh);
    expect(readAll(store, 1)).toEqual(readAll(v3, 1));
    v3.close();
    store.close();
  });

  it('reads a start that differed from its completion from its JSON, and one that did not from the row', async () => {
    const s = new EventScript();
    const init = s.request('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}', 1);
    // The result settles the version and a session; the started event must still read as it was emitted.
    s.respond(init, '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}', 2, {
      outcome: 'ok',
      protocolVersion: '2025-06-18',
      sessionId: 's1',
      era: 'legacy',
    });
    const call = s.request('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}', 3, { target: 'echo', protocolVersion: '2025-06-18' });
    s.respond(call, '{"jsonrpc":"2.0","id":2,"result":{"content":[]}}', 4, { outcome: 'ok' });
    const path = join(dir, 'starts.db');
    const rec = new SqliteRecorder({
      path,
      recording: { transport: 'stdio', target: 't', startedUs: T0, mcptapVersion: 't' },
      logger: silentLogger,
      clock: { nowUs: () => T0 },
    });
    for (const e of s.events) rec.onEvent(e);
    await rec.close();
    const store = RecordingStore.open(path);
    const saved = store.db.prepare('SELECT key, started_json FROM exchanges ORDER BY id').all();
    expect(saved).toEqual([
      { key: init.key, started_json: '{"outcome":"unanswered","era":"legacy","protocolVersion":null,"sessionId":null,"target":null,"operationKey":null}' },
      { key: call.key, started_json: '' },
    ]);
    expect([...store.events(1)]).toEqual(s.events);
    store.close();
  });
});

describe('schema v4 (one word for dropped traffic)', () => {
  it("a v3 file's not_observed anomalies read as dropped", () => {
    const path = join(dir, 'v3.db');
    const store = RecordingStore.open(path, { create: true });
    const id = store.beginRecording({ transport: 'stdio', target: 'old', startedUs: T0, mcptapVersion: 't' });
    const insert = store.db.prepare('INSERT INTO anomalies (recording_id, ord, kind, connection_id, time_us, detail) VALUES (?, ?, ?, ?, ?, ?)');
    insert.run(id, 1, 'not_observed', 'stdio:1', T0, '10 bytes of stdio forwarded but not observed');
    insert.run(id, 2, 'duplicate_id', 'stdio:1', T0, 'id 1 twice');
    store.db.pragma('user_version = 3');
    store.close();
    const v4 = RecordingStore.open(path);
    expect(v4.db.pragma('user_version', { simple: true })).toBe(4);
    expect(v4.anomalies(id).map((a) => a.kind)).toEqual(['dropped', 'duplicate_id']);
    v4.close();
  });
});
