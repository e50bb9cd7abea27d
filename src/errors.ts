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
  /** mcptap itself failed: a thread or process of its own could not start or stopped, a file of its own is missing. */
  | 'internal';

/** Every code mcptap throws, with its kind; one namespace, `MCPTAP_*`. Codes are stable: never rename one. */
export const ERROR_CODES = {
  MCPTAP_BAD_FLAG: 'usage',
  MCPTAP_BAD_JSON_POINTER: 'invalid_input',
  MCPTAP_BAD_REGEXP: 'invalid_input',
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
  MCPTAP_RECORDING_IN_PROGRESS: 'invalid_input',
  MCPTAP_SPAWN_FAILED: 'target_unavailable',
  MCPTAP_INDEXER: 'internal',
  MCPTAP_PIPELINE_WORKER: 'internal',
  MCPTAP_REFERENCE_IO: 'internal',
  MCPTAP_SPOOL_FAILED: 'internal',
  MCPTAP_LOAD_BAD_FLAG: 'usage',
  MCPTAP_LOAD_BAD_OUTPUT: 'usage',
  MCPTAP_LOAD_BAD_SHARD: 'usage',
  MCPTAP_LOAD_DATA_EMPTY: 'invalid_input',
  MCPTAP_LOAD_DATA_INVALID: 'invalid_input',
  MCPTAP_LOAD_DATA_MISSING: 'invalid_input',
  MCPTAP_LOAD_RAW_HTTP_ONLY: 'invalid_input',
  MCPTAP_LOAD_RAW_TIMEOUT: 'invalid_input',
  MCPTAP_LOAD_RECORDING_EMPTY: 'invalid_input',
  MCPTAP_LOAD_SCENARIO_INVALID: 'invalid_input',
  MCPTAP_LOAD_SCENARIO_MISSING: 'invalid_input',
  MCPTAP_LOAD_SCENARIO_MODULE: 'invalid_input',
  MCPTAP_LOAD_SCENARIO_TYPE: 'invalid_input',
  MCPTAP_LOAD_SCENARIO_YAML: 'invalid_input',
  MCPTAP_LOAD_WRITE_FAILED: 'invalid_input',
  MCPTAP_LOAD_UNKNOWN_TOOL: 'invalid_input',
  MCPTAP_LOAD_UNKNOWN_PROMPT: 'invalid_input',
  MCPTAP_LOAD_UNKNOWN_RESOURCE: 'invalid_input',
  MCPTAP_LOAD_REFERENCE_FAILED: 'target_unavailable',
  MCPTAP_LOAD_TARGET_REFUSED: 'target_unavailable',
  MCPTAP_LOAD_TARGET_UNAVAILABLE: 'target_unavailable',
  MCPTAP_LOAD_TARGET_UNREACHABLE: 'target_unavailable',
  MCPTAP_MERGE_EMPTY: 'usage',
  MCPTAP_MERGE_DUPLICATE_SHARD: 'invalid_input',
  MCPTAP_MERGE_MISMATCH: 'invalid_input',
  MCPTAP_MERGE_MISSING_SHARD: 'invalid_input',
  MCPTAP_MERGE_MIXED_SHARDS: 'invalid_input',
  MCPTAP_MERGE_UNREADABLE: 'invalid_input',
  MCPTAP_REPLAY_RULES_INVALID: 'invalid_input',
  MCPTAP_REPLAY_NO_EXCHANGES: 'invalid_input',
  MCPTAP_REPLAY_WRITE_FAILED: 'invalid_input',
  MCPTAP_REPLAY_BAD_OUTPUT: 'usage',
  MCPTAP_REPLAY_TARGET_UNAVAILABLE: 'target_unavailable',
  MCPTAP_MOCK_NO_EXCHANGES: 'invalid_input',
  MCPTAP_MOCK_UPSTREAM_UNAVAILABLE: 'target_unavailable',
  MCPTAP_REDACT_RULES_INVALID: 'invalid_input',
  MCPTAP_REDACT_RULES_MISSING: 'invalid_input',
  MCPTAP_REDACT_RECORDING_IN_USE: 'invalid_input',
  MCPTAP_REDACT_REWRITE_FAILED: 'invalid_input',
  MCPTAP_UI_BAD_REPLAY: 'invalid_input',
  MCPTAP_UI_BAD_CHECK: 'invalid_input',
  MCPTAP_UI_NOT_BUILT: 'internal',
  MCPTAP_IMPORT_INVALID: 'invalid_input',
  MCPTAP_IMPORT_MISSING: 'invalid_input',
  MCPTAP_EXPORT_WRITE_FAILED: 'invalid_input',
  MCPTAP_EXPORT_OUT_IS_RECORDING: 'usage',
  MCPTAP_MERGE_RECORDINGS_INVALID: 'invalid_input',
  MCPTAP_COMPARE_BAD_TOLERANCE: 'usage',
  MCPTAP_COMPARE_UNREADABLE: 'invalid_input',
  MCPTAP_REPORT_UNREADABLE: 'invalid_input',
  MCPTAP_CHECK_BAD_FLAG: 'usage',
  MCPTAP_CHECK_RULES_INVALID: 'invalid_input',
  MCPTAP_CHECK_RULES_MISSING: 'invalid_input',
  MCPTAP_CHECK_SCHEMAS_MISSING: 'internal',
  MCPTAP_CHECK_SNAPSHOT_INVALID: 'invalid_input',
  MCPTAP_CHECK_SNAPSHOT_WRITE_FAILED: 'invalid_input',
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
