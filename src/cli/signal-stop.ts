/**
 * Ctrl-C and SIGTERM for a long command (load, replay): the first stops it gracefully (what ran is
 * still reported), the second quits at once. The exit code then is the shell's (130, 143).
 */
import { SIGNAL_EXIT } from './exit-codes.js';

export type StopSignal = keyof typeof SIGNAL_EXIT;

export interface SignalStop {
  /** Aborted by the first signal, with the signal's name as its reason. */
  readonly signal: AbortSignal;
  /** The signal that stopped the command, if one did. */
  stoppedBy(): StopSignal | undefined;
  /** Stops listening (the command is done). */
  dispose(): void;
}

/** `says`: the line said at the first signal; `quitNow`: what must not be left behind at the second. */
export function stopOnSignals(says: (signal: StopSignal) => string, quitNow: () => void = () => undefined): SignalStop {
  const stop = new AbortController();
  const onSignal = (signal: StopSignal): void => {
    if (stop.signal.aborted) {
      quitNow();
      process.exit(SIGNAL_EXIT[signal]);
    }
    process.stderr.write(`\nmcptap: ${signal}: ${says(signal)}\n`);
    stop.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    stoppedBy: () => (stop.signal.aborted ? (stop.signal.reason as StopSignal) : undefined),
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
