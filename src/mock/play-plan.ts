/**
 * Sends a plan's messages at their times (measured from `startMs`, when the request arrived). Stops
 * quietly when `signal` aborts (the caller cancelled or went away); with `hold`, waits for that abort after the last. Messages due at once still go
 * out {@link MIN_GAP_MS} apart: a client that reads a notification and the response in one chunk
 * may drop the notification (the SDK 1.x client does), so they are not handed to the socket together.
 */
import type { JsonRpcMessage } from '../model/jsonrpc.js';
import type { PlannedMessage } from './mock-responder.js';

/** The least time between two messages of one answer (a single-message answer never waits). */
export const MIN_GAP_MS = 5;

export async function playPlan(
  messages: readonly PlannedMessage[],
  send: (m: JsonRpcMessage) => void,
  opts: { startMs: number; now?: () => number; signal?: AbortSignal; hold?: boolean },
): Promise<void> {
  const now = opts.now ?? (() => performance.now());
  for (const step of messages) {
    const wait = opts.startMs + step.afterMs - now();
    if (wait > 0) await sleep(wait, opts.signal);
    else if (step !== messages[0]) await sleep(MIN_GAP_MS, opts.signal);
    if (opts.signal?.aborted) return;
    send(step.message);
  }
  // A held plan ends only when the caller cancels or goes away.
  if (opts.hold && opts.signal && !opts.signal.aborted) await new Promise((resolve) => opts.signal!.addEventListener('abort', resolve, { once: true }));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
