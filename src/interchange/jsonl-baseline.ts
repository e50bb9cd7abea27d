/**
 * A recording as a text baseline (`replay --update next.jsonl`): its JSONL export (jsonl-export.ts)
 * with the message lines in time order (ties in the order seen) and every message's keys sorted,
 * so that the same traffic always gives the same bytes and a pull request's diff shows what changed.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { RecordingStore } from '../store/recording-store.js';
import { jsonlLines } from './jsonl-export.js';
import { parseTimeUs } from './jsonl-format.js';
import { canonical } from '../replay/rules.js';

/** Whether an output path asks for JSONL (by its name). */
export function isJsonlPath(file: string): boolean {
  return /\.jsonl$/i.test(file);
}

/** Whether a file starts with the JSONL header line (false when absent or unreadable). */
export function isJsonlBaseline(file: string): boolean {
  return /^\s*\{\s*"mcptap"\s*:\s*"jsonl"/.test(fileHead(file, 32));
}

/** A file's first bytes as text ('' when absent or unreadable). */
export function fileHead(file: string, bytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(bytes);
    return head.subarray(0, readSync(fd, head, 0, bytes, 0)).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The file's latest recording as baseline JSONL text, newline-terminated. */
export function baselineJsonl(recordingFile: string): string {
  const store = RecordingStore.open(recordingFile, { create: false });
  try {
    const [header, ...rest] = [...jsonlLines(store, store.latestRecordingId()!)];
    const lines = rest.map((text, seen) => ({ line: JSON.parse(text) as Record<string, unknown>, seen }));
    lines.sort((a, b) => parseTimeUs(a.line.t)! - parseTimeUs(b.line.t)! || a.seen - b.seen);
    return [
      header,
      ...lines.map(({ line }) => JSON.stringify(line.message !== undefined ? { ...line, message: JSON.parse(canonical(line.message)) as unknown } : line)),
    ]
      .map((l) => `${l}\n`)
      .join('');
  } finally {
    store.close();
  }
}
