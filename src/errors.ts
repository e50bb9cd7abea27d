/**
 * mcptap's own failures: one error class with a closed union of stable codes (as undici's
 * `UND_ERR_*`), importable from every layer. What mcptap *observes* (JSON-RPC errors, `isError`
 * results) is data, never one of these. The CLI maps each code's kind to an exit code
 * (cli/exit-codes.ts); the library never exits.
 */

/** What went wrong, in the terms a caller acts on. */
export type ErrorKind =
  /** Bad flags or arguments: the caller asked for something impossible. */
  | 'usage'
  /** A scenario, recording, result or data file is invalid or unreadable. */
  | 'invalid_input'
  /** The target could not be reached or started. */
  | 'target_unavailable'
  /** A part of mcptap could not start or stopped (a thread or process of its own). */
  | 'failed';

/** Every code mcptap throws, with its kind. Codes are stable: never rename one. */
export const ERROR_CODES = {
  MCPTAP_BAD_FLAG: 'usage',
  MCPTAP_LISTEN: 'usage',
  MCPTAP_METRICS_LISTEN: 'usage',
  MCPTAP_TELEMETRY_CONFIG: 'usage',
  MCPTAP_NO_EXCHANGE: 'invalid_input',
  MCPTAP_NO_RECORDING: 'invalid_input',
  MCPTAP_NOT_A_RECORDING: 'invalid_input',
  MCPTAP_RECORD_OPEN: 'invalid_input',
  MCPTAP_RECORDING_NOT_FOUND: 'invalid_input',
  MCPTAP_RECORDING_TOO_NEW: 'invalid_input',
  MCPTAP_RECORDING_UNREADABLE: 'invalid_input',
  MCPTAP_RECORDING_UNWRITABLE: 'invalid_input',
  MCPTAP_RECORDING_DAMAGED: 'invalid_input',
  MCPTAP_SPAWN_FAILED: 'target_unavailable',
  MCPTAP_INDEXER: 'failed',
  MCPTAP_PIPELINE_WORKER: 'failed',
  MCPTAP_REFERENCE_IO: 'failed',
  LOAD_BAD_FLAG: 'usage',
  LOAD_BAD_OUTPUT: 'usage',
  LOAD_BAD_SHARD: 'usage',
  LOAD_DATA_EMPTY: 'invalid_input',
  LOAD_DATA_INVALID: 'invalid_input',
  LOAD_DATA_MISSING: 'invalid_input',
  LOAD_RAW_HTTP_ONLY: 'invalid_input',
  LOAD_RAW_TIMEOUT: 'invalid_input',
  LOAD_RECORDING_EMPTY: 'invalid_input',
  LOAD_SCENARIO_INVALID: 'invalid_input',
  LOAD_SCENARIO_MISSING: 'invalid_input',
  LOAD_SCENARIO_MODULE: 'invalid_input',
  LOAD_SCENARIO_TYPE: 'invalid_input',
  LOAD_SCENARIO_YAML: 'invalid_input',
  LOAD_WRITE_FAILED: 'invalid_input',
  LOAD_UNKNOWN_TOOL: 'invalid_input',
  LOAD_UNKNOWN_PROMPT: 'invalid_input',
  LOAD_UNKNOWN_RESOURCE: 'invalid_input',
  LOAD_REFERENCE_FAILED: 'target_unavailable',
  LOAD_TARGET_REFUSED: 'target_unavailable',
  LOAD_TARGET_UNAVAILABLE: 'target_unavailable',
  LOAD_TARGET_UNREACHABLE: 'target_unavailable',
  MERGE_EMPTY: 'usage',
  MERGE_DUPLICATE_SHARD: 'invalid_input',
  MERGE_MISMATCH: 'invalid_input',
  MERGE_MISSING_SHARD: 'invalid_input',
  MERGE_MIXED_SHARDS: 'invalid_input',
  MERGE_UNREADABLE: 'invalid_input',
  REPLAY_RULES_INVALID: 'invalid_input',
  REPLAY_NO_EXCHANGES: 'invalid_input',
  REPLAY_WRITE_FAILED: 'invalid_input',
  REPLAY_BAD_OUTPUT: 'usage',
  REPLAY_TARGET_UNAVAILABLE: 'target_unavailable',
  MOCK_NO_EXCHANGES: 'invalid_input',
  MOCK_UPSTREAM_UNAVAILABLE: 'target_unavailable',
  REDACT_RULES_INVALID: 'invalid_input',
  REDACT_RULES_MISSING: 'invalid_input',
  REDACT_RECORDING_IN_USE: 'invalid_input',
  REDACT_REWRITE_FAILED: 'invalid_input',
  IMPORT_INVALID: 'invalid_input',
  IMPORT_MISSING: 'invalid_input',
  EXPORT_WRITE_FAILED: 'invalid_input',
  EXPORT_OUT_IS_RECORDING: 'usage',
  MERGE_RECORDINGS_INVALID: 'invalid_input',
  COMPARE_BAD_TOLERANCE: 'usage',
  COMPARE_UNREADABLE: 'invalid_input',
  REPORT_UNREADABLE: 'invalid_input',
  CHECK_BAD_FLAG: 'usage',
  CHECK_RULES_INVALID: 'invalid_input',
  CHECK_RULES_MISSING: 'invalid_input',
  CHECK_SCHEMAS_MISSING: 'failed',
  CHECK_SNAPSHOT_INVALID: 'invalid_input',
  CHECK_SNAPSHOT_WRITE_FAILED: 'invalid_input',
} as const satisfies Record<string, ErrorKind>;

export type McptapErrorCode = keyof typeof ERROR_CODES;

export function isMcptapErrorCode(code: unknown): code is McptapErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

export class McptapError extends Error {
  readonly kind: ErrorKind;

  constructor(
    readonly code: McptapErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'McptapError';
    this.kind = ERROR_CODES[code];
  }
}

/** An error as it crosses to another thread or process (structured clone keeps no class). */
export interface WireError {
  code: McptapErrorCode;
  message: string;
}

/** `err` as a {@link WireError}; one that is not ours takes the `fallback` code. */
export function toWireError(err: unknown, fallback: McptapErrorCode): WireError {
  return { code: err instanceof McptapError ? err.code : fallback, message: err instanceof Error ? err.message : String(err) };
}

/** The error a {@link WireError} stood for; an unknown code (a newer peer) takes the `fallback` code. */
export function fromWireError(w: { code: string; message: string }, fallback: McptapErrorCode): McptapError {
  return new McptapError(isMcptapErrorCode(w.code) ? w.code : fallback, w.message);
}
