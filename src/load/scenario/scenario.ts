/**
 * A load scenario as plain data: what to load (target, era), how (phases), with what (steps, data)
 * and what counts as passing (thresholds). Built by {@link validateScenario} from a YAML file or a
 * `defineScenario` module; everything downstream trusts these invariants:
 * - durations are in ms, rates in requests per second, all finite and non-negative;
 * - every step has a positive integer weight and a method; step names are unique;
 * - templates are compiled (see template.ts); thresholds are parsed (see thresholds.ts).
 */
import type { JsonRpcResponse } from '../../model/jsonrpc.js';
import type { CompiledTemplate } from './template.js';
import type { ThresholdSpec } from '../results/thresholds.js';

export type EraChoice = 'legacy' | 'modern' | 'detect';

export type TargetSpec =
  | { kind: 'http'; url: string; headers: Record<string, string>; connections?: number }
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string; pool: number }
  | {
      kind: 'reference';
      transport: 'http' | 'stdio';
      stall?: { everyMs: number; forMs: number };
      inProcess: boolean;
      pool: number;
      /** The reference server's tools ignore cancellation by default (`mcptap reference --ignore-cancel`). */
      ignoreCancel?: boolean;
    };

export interface ThinkTime {
  minMs: number;
  maxMs: number;
}

/** Closed model: `vus` virtual users, each running iterations back to back (plus think time). */
export interface ClosedPhase {
  kind: 'closed';
  name: string;
  vus: number;
  /** Iterations per virtual user; the phase ends when all are done or `durationMs` elapses. */
  iterations?: number;
  durationMs?: number;
  thinkTime: ThinkTime;
  /** Raw driver only: total request rate cap across connections (autocannon `overallRate`). */
  rate?: number;
}

/** Open model: arrivals at `fromRate` ramping linearly to `toRate` over `durationMs`, at most `maxInFlight` at once. */
export interface OpenPhase {
  kind: 'open';
  name: string;
  fromRate: number;
  toRate: number;
  durationMs: number;
  maxInFlight: number;
}

/**
 * Replay (needs `from:`): the recorded requests, each due at its recorded offset / `speed` from the
 * phase start, as open-model arrivals; at most `maxInFlight` at once (default: no cap).
 */
export interface ReplayPhase {
  kind: 'replay';
  name: string;
  speed: number;
  maxInFlight?: number;
}

export type Phase = ClosedPhase | OpenPhase | ReplayPhase;

/** One check on a step's answer; `name` (given, or derived from what it checks) labels its pass rate. */
export type CheckSpec = { name: string } & CheckKind;

export type CheckKind =
  | { kind: 'isError'; expect: boolean }
  | { kind: 'error'; code?: number }
  | { kind: 'noError' }
  | { kind: 'status'; status: number }
  | { kind: 'contains'; text: string }
  /** `path`: segments of a JSON Pointer into the response (see data-file/check-path.ts). */
  | { kind: 'path'; path: string[]; equals?: unknown; matches?: RegExp };

/**
 * Cancel the call mid-flight, by its era's and transport's mechanism (close the 2026-07-28 HTTP
 * stream; `notifications/cancelled` in the legacy era and on stdio), then watch what the server
 * does. See cancel-call.ts for the measures and the verdict.
 */
export interface CancelSpec {
  /** Cancel this long after the request was sent... */
  afterMs?: number;
  /** ...or once this many progress notifications arrived (exactly one of the two). */
  afterProgress?: number;
  /** Legacy HTTP: also close the response stream right after `notifications/cancelled`. */
  close: boolean;
  /** How long to watch for work after the cancel (progress, a final response). */
  observeMs: number;
  /** Signs of work within this long after the cancel do not count (already in flight). */
  graceMs: number;
  /** A tool asked afterwards about the cancelled call's work (the reference server's `in-flight`). */
  probe?: string;
  /** Scripted calls: cancel when this aborts (or at `afterMs` / `afterProgress`, whichever comes first). */
  signal?: AbortSignal;
}

export interface StepSpec {
  name: string;
  weight: number;
  method: string;
  /** Params template (tools/call: `{name, arguments}` built from `tool` + `arguments`). */
  params: CompiledTemplate;
  /** Tool name for tools/call, prompt name for prompts/get (for per-tool statistics). */
  target?: string;
  /** Header overrides (HTTP): a string sets, `null` removes. */
  headers?: Record<string, string | null>;
  /** Ask for progress notifications (adds `_meta.progressToken`). */
  progress: boolean;
  checks: CheckSpec[];
  /** The answer this step is meant to get (see expected-outcome.ts). */
  expect?: 'tool_error' | 'protocol_error';
  cancel?: CancelSpec;
  /**
   * A long-lived stream held open until its phase ends (or for the timeout, in a phase with no
   * duration): 2026-07-28 `subscriptions/listen` with this filter, a legacy session's GET stream.
   */
  listen?: ListenFilter;
}

/** What a `listen` step subscribes to (the `notifications` of `subscriptions/listen`). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

export interface DataSpec {
  name: string;
  file: string;
  format: 'csv' | 'jsonl';
  order: 'sequential' | 'random';
}

/** What a scripted (`defineScenario`) iteration gets. */
export interface IterationContext {
  readonly vu: number;
  readonly iteration: number;
  readonly phase: string;
  /** The row of each data set for this iteration. */
  readonly data: Readonly<Record<string, Record<string, unknown>>>;
  /** Deterministic random numbers for this iteration (same on every shard). */
  random(): number;
  /** Send one request and record it; resolves with the JSON-RPC response (or undefined on a transport error). */
  call(method: string, params?: Record<string, unknown>, opts?: CallOptions): Promise<JsonRpcResponse | undefined>;
  /** Shorthand for `call('tools/call', {name, arguments})`. */
  tool(name: string, args?: Record<string, unknown>, opts?: CallOptions): Promise<JsonRpcResponse | undefined>;
  /** Record a named check; a false condition counts as a check failure. */
  check(name: string, ok: boolean): boolean;
  sleep(ms: number): Promise<void>;
}

export interface CallOptions {
  /** Name for statistics (default: the tool or method). */
  step?: string;
  headers?: Record<string, string | null>;
  progress?: boolean;
  /**
   * Cancel the call mid-flight and judge what the server does, as a step's `cancel:` does:
   * `{after: '300ms'}` or `{afterProgress: 2}` or `{signal}` (an AbortSignal the script aborts;
   * with `after`/`afterProgress` too, whichever comes first), plus `observe`, `grace`, `probe`,
   * `close`. The call is then reported in the result's cancellation section.
   */
  cancel?: ScriptCancel;
}

/** A scripted call's cancel option (durations with their unit, as in YAML). */
export interface ScriptCancel {
  after?: string;
  afterProgress?: number;
  signal?: AbortSignal;
  observe?: string;
  grace?: string;
  probe?: string;
  close?: boolean;
}

export type ScriptedIteration = (ctx: IterationContext) => Promise<void>;

export interface Scenario {
  name: string;
  /** The file it came from (for messages), when it came from one. */
  source?: string;
  target: TargetSpec;
  era: EraChoice;
  /** Modern era: the protocol version to put in `_meta` and headers. */
  protocolVersion?: string;
  /** The capabilities the sessions declare (default: the recorded ones of `from:`, else none). */
  clientCapabilities?: Record<string, unknown>;
  /** Legacy: re-initialize a session after this many iterations (0 = keep it for the whole run). */
  sessionChurn: number;
  timeoutMs: number;
  seed: number;
  mix: 'weighted' | 'random';
  driver: 'auto' | 'raw';
  phases: Phase[];
  steps: StepSpec[];
  data: DataSpec[];
  thresholds: ThresholdSpec[];
  iteration?: ScriptedIteration;
  /** `preflight: false`: do not check the tools the steps name against the target's tools/list first. */
  preflight?: boolean;
  /** Take the mix and arguments (and `replay` phases their schedule) from this recording (SQLite). */
  from?: { file: string; recording?: number };
}
