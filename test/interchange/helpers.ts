/** Shared by the interchange tests: running the built CLI and comparing recordings' exchanges. */
import { spawnSync } from 'node:child_process';
import { RecordingStore } from '../../src/store/recording-store.js';
import type { StoredExchange } from '../../src/store/types.js';
import { MCPTAP } from '../helpers/paths.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function mcptap(args: string[], env: NodeJS.ProcessEnv = process.env): CliRun {
  const r = spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', env, timeout: 60_000, maxBuffer: 64 * 2 ** 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What must survive export -> import: everything a user reads of an exchange. */
export function exchangeFacts(ex: StoredExchange) {
  const res = ex.response as { result?: unknown; error?: unknown } | undefined;
  return {
    direction: ex.direction,
    id: ex.id,
    method: ex.method,
    target: ex.target,
    params: (ex.request as { params?: unknown }).params,
    result: res?.result,
    error: res?.error,
    outcome: ex.outcome,
    isError: ex.isError,
    errorCode: ex.errorCode,
    startUs: ex.startUs,
    endUs: ex.endUs,
    latencyUs: ex.latencyUs,
    progress: ex.progress.length,
    state: ex.state,
    sessionId: ex.sessionId,
    httpStatus: ex.transport?.httpStatus,
  };
}

/** The exchanges of one recording of `file`, in the order they started. */
export function exchangesOf(file: string, recordingId?: number): StoredExchange[] {
  const store = RecordingStore.open(file, { create: false });
  try {
    const id = recordingId ?? store.latestRecordingId()!;
    return store.exchanges({ recordingId: id }).sort((a, b) => a.startUs - b.startUs || a.requestSeq - b.requestSeq);
  } finally {
    store.close();
  }
}
