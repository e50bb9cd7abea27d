/** Exit codes CI can rely on. Documented in the README; never renumber. */
import { McptapError, type ErrorKind } from '../errors.js';

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
  /** mcptap itself failed: a bug, or a part of its own could not start or stopped (never 1, which is a finding). */
  Internal: 70,
} as const;

/** Stopped by a signal: the shell's convention, 128 + the signal's number. */
export const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

const BY_KIND: Record<ErrorKind, ExitCodeValue> = {
  usage: ExitCode.Usage,
  invalid_input: ExitCode.InvalidInput,
  target_unavailable: ExitCode.TargetUnavailable,
  internal: ExitCode.Internal,
};

/** The exit code of one of mcptap's own errors (its code's kind); anything else is a bug of ours. */
export function exitCodeFor(err: unknown): ExitCodeValue {
  return err instanceof McptapError ? BY_KIND[err.kind] : ExitCode.Internal;
}
