/**
 * A step's declared outcome (`expect: tool_error` or `protocol_error`): an answer of that kind is
 * the step working, so it is counted apart (`expectedErrors`), out of the error rate and the
 * `tool_errors` / `jsonrpc_errors` thresholds; any other answer fails the implicit check
 * `expect KIND`, with what came instead.
 */
import { answerText, recordVerdict } from './checks.js';
import type { CallRecord } from '../drivers/driver.js';

export type ExpectedOutcome = 'tool_error' | 'protocol_error';

export const EXPECTED_OUTCOMES: readonly ExpectedOutcome[] = ['tool_error', 'protocol_error'];

const WANTED: Record<ExpectedOutcome, { outcome: string; text: string }> = {
  tool_error: { outcome: 'tool_error', text: 'a tool error (isError: true)' },
  protocol_error: { outcome: 'jsonrpc_error', text: 'a JSON-RPC error' },
};

/** Judges the call against the step's declared outcome; call after the step's own checks. */
export function applyExpected(expect: ExpectedOutcome, rec: CallRecord): void {
  const s = rec.sample;
  const name = `expect ${expect}`;
  if (s.outcome !== WANTED[expect].outcome) {
    recordVerdict(rec, { name, ok: false, expected: WANTED[expect].text, got: answerText(rec) });
    return;
  }
  recordVerdict(rec, { name, ok: true });
  s.expected = expect;
  s.outcome = 'ok';
  s.isError = false;
  delete s.rpcCode;
}
