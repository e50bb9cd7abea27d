/**
 * A recording tap's journal: a small file beside the recording (`.NAME.tap-PID`) that says how far
 * the tap spooled and how far its indexer had indexed. The spool itself is unlinked and encrypted
 * under a key that lives only in those processes: when they are all killed at once (SIGKILL to the
 * process group) what was spooled and not indexed is gone, and this file is what tells the next
 * command that opens the recording how much (see {@link deadTapJournals}).
 *
 * Two slots of {@link SLOT} bytes, each written whole by one process: the tap's
 * (`tap PID START started US spooled BYTES`) and the indexer's (`indexer PID START indexed BYTES`),
 * START being the process's start time (/proc), so that a reused pid is not mistaken for it.
 * The tap first fills the indexer's slot itself when it spawns the indexer (before the indexer can
 * write it): an indexer still loading when its tap exits is then known alive, not taken for lost.
 * Whoever completes the recording removes the file: the indexer when it ends the recording, the tap
 * when it has said what its recording lacks. Never fatal: a journal that cannot be written only
 * leaves a later diagnosis weaker.
 */
import { closeSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { processStartTicks } from '../util/proc-exit.js';

const SLOT = 80;
const TAP_SLOT = 0;
const INDEXER_SLOT = 1;

/** Where the journal of the tap `pid` recording to `recordingPath` goes. */
export function tapJournalPath(recordingPath: string, pid: number): string {
  return join(dirname(recordingPath), `.${basename(recordingPath)}.tap-${pid}`);
}

/** One process's slot of a journal, kept open and rewritten in place. */
export class JournalSlot {
  private fd: number | undefined;

  /** Opens (`create`: creates) the journal at `path` for one slot; undefined when it cannot be. */
  static open(path: string, slot: 'tap' | 'indexer', create: boolean): JournalSlot | undefined {
    try {
      return new JournalSlot(openSync(path, create ? 'w' : 'r+', 0o600), slot === 'tap' ? TAP_SLOT : INDEXER_SLOT, path);
    } catch {
      return undefined;
    }
  }

  private constructor(
    fd: number,
    private readonly slot: number,
    readonly path: string,
  ) {
    this.fd = fd;
  }

  /** Rewrites the slot with `fields` (name value pairs, space-separated). */
  write(fields: string): void {
    this.writeAt(this.slot, fields);
  }

  /** The tap's side: names the indexer it just spawned in the indexer's slot, before that indexer runs (see the header). */
  nameIndexer(pid: number): void {
    this.writeAt(INDEXER_SLOT, `${selfFields('indexer', pid)} indexed 0`);
  }

  private writeAt(slot: number, fields: string): void {
    if (this.fd === undefined) return;
    const line = Buffer.alloc(SLOT, ' ');
    line.write(fields.slice(0, SLOT - 1));
    line[SLOT - 1] = 10;
    try {
      writeSync(this.fd, line, 0, SLOT, slot * SLOT);
    } catch {
      this.close(false); // a full disk: the diagnosis is weaker, nothing else
    }
  }

  /** Stops writing; `remove`: the recording is complete, or its loss was said (the journal goes). */
  close(remove: boolean): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (remove) removeJournal(this.path);
  }
}

/** This process's identity in a slot: its pid and start time. */
export function selfFields(label: 'tap' | 'indexer', pid = process.pid): string {
  return `${label} ${pid} ${processStartTicks(pid) ?? 0}`;
}

export function removeJournal(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone already */
  }
}

/** A journal whose tap and indexer are both gone: the recording they were writing was never completed. */
export interface DeadTap {
  path: string;
  tapPid: number;
  /** The recording's start (its `startedUs`): which recording of the file it is. */
  startedUs: number;
  /** Bytes of traffic the tap had put in the spool, as far as it last said. */
  spooled: number;
  /** Bytes of spool in the recording, as far as the indexer last said (0 when it never said). */
  indexed: number;
}

/** A journal whose tap is gone while its indexer still runs: the indexer is completing the recording. */
export interface FinishingTap {
  path: string;
  tapPid: number;
  indexerPid: number;
}

/** The journals beside `recordingPath` whose processes are all gone (those of a running tap are left alone). */
export function deadTapJournals(recordingPath: string): DeadTap[] {
  return tapJournals(recordingPath)
    .filter((j) => !j.tapAlive && !j.indexerAlive)
    .map(({ path, tapPid, startedUs, spooled, indexed }) => ({ path, tapPid, startedUs, spooled, indexed }));
}

/** The journals beside `recordingPath` whose tap has gone and whose indexer still writes the recording. */
export function finishingTapJournals(recordingPath: string): FinishingTap[] {
  return tapJournals(recordingPath)
    .filter((j) => !j.tapAlive && j.indexerAlive)
    .map(({ path, tapPid, indexerPid }) => ({ path, tapPid, indexerPid: indexerPid! }));
}

type JournalState = DeadTap & { tapAlive: boolean; indexerAlive: boolean; indexerPid: number | undefined };

function tapJournals(recordingPath: string): JournalState[] {
  const prefix = `.${basename(recordingPath)}.tap-`;
  let names: string[];
  try {
    names = readdirSync(dirname(recordingPath)).filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
  const found: JournalState[] = [];
  for (const name of names) {
    const path = join(dirname(recordingPath), name);
    const j = readJournal(path);
    if (j) found.push({ path, ...j });
  }
  return found;
}

function readJournal(path: string): Omit<JournalState, 'path'> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
  const tap = /^tap (\d+) (\d+) started (\d+) spooled (\d+)/.exec(text.slice(0, SLOT));
  if (!tap) return undefined; // being created
  const indexer = /^indexer (\d+) (\d+) indexed (\d+)/.exec(text.slice(SLOT, 2 * SLOT));
  return {
    tapAlive: running(Number(tap[1]), Number(tap[2])),
    indexerAlive: indexer !== null && running(Number(indexer[1]), Number(indexer[2])),
    indexerPid: indexer ? Number(indexer[1]) : undefined,
    tapPid: Number(tap[1]),
    startedUs: Number(tap[3]),
    spooled: Number(tap[4]),
    indexed: indexer ? Number(indexer[3]) : 0,
  };
}

/** Process `pid` runs and is the one that started at `ticks` (0: unknown, any). */
function running(pid: number, ticks: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const now = processStartTicks(pid);
  return now === undefined || ticks === 0 || now === ticks;
}

/** What a dead tap's journal means for the file: which recording, how many spooled bytes it lacks, and the reason to keep with it. */
export interface DeadTapVerdict {
  /** The recording the tap was writing; undefined when its indexer never opened one. */
  recordingId: number | undefined;
  /** The recording was ended after all (its indexer finished just as it was killed): nothing is missing. */
  ended: boolean;
  /** Bytes of spool never indexed. */
  lost: number;
  /** Why the recording is incomplete, as `mcptap ls` shows it. */
  why: string;
}

export function deadTapVerdict(db: Database, d: DeadTap): DeadTapVerdict {
  const row = db.prepare('SELECT id, ended_us FROM recordings WHERE started_us = ? ORDER BY id DESC LIMIT 1').get(d.startedUs) as
    { id: number; ended_us: number | null } | undefined;
  const lost = Math.max(0, d.spooled - d.indexed);
  const why =
    `the tap (pid ${d.tapPid}) and its indexer were killed before they finished the recording (SIGKILL to its process group?): ` +
    `${unspooledLoss(lost, 'indexed')}, and what the tap forwarded in its last milliseconds (not yet spooled) is missing too`;
  return { recordingId: row?.id, ended: row !== undefined && row.ended_us !== null, lost, why };
}

/** Keeps `why` with the recording (`mcptap ls`: INCOMPLETE) and removes the journal; false when the file cannot be written (read-only, locked). */
export function settleDeadTap(db: Database, d: DeadTap, v: DeadTapVerdict): boolean {
  try {
    if (v.recordingId !== undefined && !v.ended)
      db.prepare(`UPDATE recordings SET meta_json = json_set(coalesce(meta_json, '{}'), '$.incomplete', ?) WHERE id = ? AND ended_us IS NULL`).run(
        v.why,
        v.recordingId,
      );
  } catch {
    return false;
  }
  removeJournal(d.path);
  return true;
}

/**
 * What a journal says of the spooled traffic a killed tap left unread (`bytes` spooled beyond the
 * journal's last word, which lags the spool by tens of ms: a floor, and 0 proves nothing).
 */
export function unspooledLoss(bytes: number, what: 'indexed' | 'recorded'): string {
  return bytes > 0
    ? `at least ${bytes} bytes of spooled traffic were never ${what}`
    : `spooled traffic may not have been ${what} (the journal, tens of ms behind the spool, shows none left)`;
}
