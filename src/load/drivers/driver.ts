/**
 * The IO stage of the load engine. A driver turns prepared calls into {@link Sample}s over one
 * transport; executors and iteration code only see {@link Lane}s: the place an iteration's calls
 * go (a legacy session, a stdio process, or the stateless modern endpoint).
 */
import type { CallResult } from '../../client/call-result.js';
import type { CallVerdict, CancelObservation } from '../results/cancel-stats.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../model/jsonrpc.js';
import type { Sample } from '../results/sample.js';
import type { CancelSpec } from '../scenario/scenario.js';
import type { NameList } from '../run/preflight.js';

export interface PreparedCall {
  step: string;
  method: string;
  /** Tool name of a tools/call (per-tool statistics). */
  tool?: string;
  params?: Record<string, unknown>;
  /** HTTP header overrides: a string sets, `null` removes. */
  headers?: Readonly<Record<string, string | null>>;
  /** Add `_meta.progressToken` so the server streams progress. */
  progress: boolean;
  /** Cancel the call mid-flight and watch the server (see cancel-call.ts). */
  cancel?: CancelSpec;
  /**
   * The same object comes for every iteration of its step and never changes: drivers may keep
   * what they build from it (see request-shapes.ts).
   */
  fixed?: boolean;
}

export interface CallRecord {
  sample: Sample;
  response?: JsonRpcResponse;
  result?: CallResult;
  /** Calls of a cancelling step: what was seen, and the verdict when the cancel fired. */
  cancel?: { observation: CancelObservation; verdict?: CallVerdict };
}

export interface Lane {
  readonly id: number;
  /**
   * Send one call. Resolves undefined when it could not be sent because the lane's session could
   * not be set up (that failure is already recorded as an `initialize` sample). Never rejects.
   */
  call(c: PreparedCall, intendedUs: number): Promise<CallRecord | undefined>;
  /**
   * Hold a `listen` step's stream open until `stop` aborts, handing every message to `onMessage`.
   * `held`: it lasted until the stop; otherwise `rec` says how it failed or ended early. Absent
   * where the transport has no such stream.
   */
  listen?(c: PreparedCall, intendedUs: number, hold: StreamHold): Promise<{ held: boolean; rec?: CallRecord }>;
  /** An iteration ended on this lane (legacy HTTP: counts towards session churn); absent where that does nothing. */
  endIteration?(): Promise<void>;
  close(): Promise<void>;
}

export interface StreamHold {
  stop: AbortSignal;
  /** Upper bound on the hold, ms (the stream's own timeout). */
  maxMs: number;
  onMessage: (m: JsonRpcMessage, timeUs: number) => void;
  /** The stream's response headers arrived. */
  onHeaders: (status: number, timeUs: number) => void;
}

export interface Driver {
  readonly transport: 'http' | 'stdio';
  readonly era: 'legacy' | 'modern';
  /** Human-readable target, e.g. the URL or command line. */
  readonly target: string;
  newLane(id: number): Lane;
  /** The target's tool, prompt, resource (URI) and template names, every page, for the pre-flight; a list it does not give is absent. */
  listNames?(lists: readonly NameList[]): Promise<Partial<Record<NameList, string[]>>>;
  close(): Promise<void>;
}

/** Where drivers report samples that belong to no iteration call (session setup) and stray violations. */
export interface SampleRecorder {
  record(sample: Sample): void;
  violation(kind: string): void;
}
