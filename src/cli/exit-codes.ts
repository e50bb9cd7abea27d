/** Exit codes CI can rely on. Documented in the README; never renumber. */
export const ExitCode = {
  Ok: 0,
  /** The run worked but found what it was asked to find: failed thresholds, replay differences. */
  Failed: 1,
  /** Bad command line. */
  Usage: 2,
  /** A load threshold failed. */
  ThresholdFailed: 3,
  /** A scenario, recording or config file is invalid. */
  InvalidInput: 4,
  /** The target could not be reached or started (command not found, connection refused). */
  TargetUnavailable: 5,
  /** mcptap itself failed (a bug). */
  Internal: 70,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** mcptap's own failures carry a stable code (like undici's `UND_ERR_*`) and an exit code. */
export class McptapError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: ExitCodeValue = ExitCode.Failed,
  ) {
    super(message);
    this.name = 'McptapError';
  }
}
