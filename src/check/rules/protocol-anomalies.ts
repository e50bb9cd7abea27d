/**
 * The tap's own observations as rules: each anomaly kind the correlator and taps record, exchanges
 * never answered or still pending when the recording ends, traffic the recorder dropped, and a
 * recording marked INCOMPLETE.
 */
import type { AnomalyKind, TapEvent } from '../../model/events.js';
import type { Checker, CheckContext, CheckerFactory, Emit } from '../checker.js';
import type { RuleInfo, Severity } from '../finding.js';

const rule = (name: string, severity: Severity, title: string, help: string): RuleInfo => ({
  id: `protocol/${name}`,
  family: 'protocol',
  severity,
  title,
  help,
});

/**
 * One rule per anomaly kind; ids are stable (kebab-case of the kind). `check` anomalies are the
 * live check's own findings, recorded: the rules that made them run again offline, never re-reported.
 */
export const ANOMALY_RULES: Record<Exclude<AnomalyKind, 'check'>, RuleInfo> = {
  stdout_pollution: rule(
    'stdout-pollution',
    'error',
    'The server writes only JSON-RPC to stdout',
    'A stdio server printed something that is not a JSON-RPC message on stdout (a log line, a banner). Clients may fail to parse the stream. Log to stderr instead.',
  ),
  invalid_message: rule(
    'invalid-message',
    'error',
    'Every message is valid JSON-RPC 2.0',
    'A frame was not JSON, or JSON that is not a JSON-RPC 2.0 message. The peer cannot process it.',
  ),
  duplicate_id: rule(
    'duplicate-id',
    'error',
    'Request ids are unique while in flight',
    'A request reused the id of a request still in flight on the same connection and direction; responses cannot be told apart.',
  ),
  orphan_response: rule(
    'orphan-response',
    'warning',
    'Every response answers a request',
    'A response carried an id that matches no request in flight (answered twice, or never asked).',
  ),
  response_after_cancel: rule(
    'response-after-cancel',
    'warning',
    'No response after a cancellation',
    'The server answered a request the client had cancelled; the spec says the receiver should not send a response for a cancelled request.',
  ),
  truncated_at_eof: rule(
    'truncated-at-eof',
    'warning',
    'Streams end on a complete message',
    'The stream ended in the middle of a message (the peer exited or the connection broke while writing).',
  ),
  line_too_long: rule(
    'line-too-long',
    'error',
    'Messages fit the line limit',
    'A line exceeded the limit the tap accepts and could not be parsed as a message.',
  ),
  unknown_progress_token: rule(
    'unknown-progress-token',
    'warning',
    'Progress refers to a request in flight',
    'A progress notification carried a token that no request in flight had asked for.',
  ),
  header_mismatch: rule(
    'header-mismatch',
    'error',
    'HTTP headers agree with the message',
    'An MCP HTTP header (MCP-Protocol-Version, Mcp-Method, Mcp-Name, session) disagreed with the message body or the negotiated state.',
  ),
  protocol_violation: rule(
    'protocol-violation',
    'error',
    'The transport rules of MCP are kept',
    'The tap saw a breach of the transport or lifecycle rules (for example a message on the wrong stream).',
  ),
  dropped: rule(
    'dropped',
    'warning',
    'The tap observed all traffic',
    'The tap forwarded traffic it could not observe (its side path was full): the recording has a gap and checks cannot see what was in it.',
  ),
  upstream_failed: rule(
    'upstream-failed',
    'warning',
    'Streams without a message succeed',
    'An HTTP request without a JSON-RPC message (a GET stream, a DELETE) failed upstream.',
  ),
  unknown_request_cancelled: rule(
    'unknown-request-cancelled',
    'warning',
    'A server cancels only requests it sent',
    "The server sent notifications/cancelled for a request id that no recorded frame carried. Over HTTP the likely cause is the GET-stream race: a server request sent before the client's standalone GET stream reached the server was dropped by the server's transport.",
  ),
};

export const END_RULES = {
  unanswered: rule('unanswered', 'warning', 'Every request is answered', 'A request was never answered before its connection closed.'),
  pending: rule(
    'pending',
    'warning',
    'No request is pending at the end of the recording',
    'A request was still in flight when the recording ended: the recording stopped before its answer, or the server never answered.',
  ),
  incomplete: rule(
    'incomplete-recording',
    'error',
    'The recording is complete',
    'The recording is marked INCOMPLETE (its tap was killed, or lost traffic): findings about what is missing cannot be made, so the verdict is partial.',
  ),
  droppedEvents: rule(
    'dropped-events',
    'warning',
    'The recorder stored every event',
    'The recorder dropped events (its queue was full or the database refused them): the recording has gaps.',
  ),
} as const;

export const protocolAnomalyChecker: CheckerFactory = (_settings, context) => new AnomalyChecker(context);

class AnomalyChecker implements Checker {
  readonly rules = [...Object.values(ANOMALY_RULES), ...Object.values(END_RULES)];
  /** Exchanges in flight: key -> where (bounded by what the tap itself keeps open). */
  private readonly open = new Map<
    string,
    { method: string; connectionId: string; jsonRpcId: string | number; frameSeq: number; tool?: string; timeUs: number }
  >();

  constructor(private readonly context: CheckContext | undefined) {}

  onEvent(event: TapEvent, emit: Emit): void {
    if (event.type === 'anomaly') {
      if (event.kind === 'check') return;
      const info = ANOMALY_RULES[event.kind];
      if (!info) return;
      emit({
        ruleId: info.id,
        severity: info.severity,
        message: event.detail,
        where: {
          connectionId: event.connectionId,
          ...(event.exchangeKey !== undefined && { exchangeKey: event.exchangeKey }),
          ...(event.frameSeq !== undefined && { frameSeq: event.frameSeq }),
          ...(event.direction !== undefined && { side: event.direction === 'c2s' ? 'client' : 'server' }),
          timeUs: event.timeUs,
        },
      });
    } else if (event.type === 'exchange-started') {
      const ex = event.exchange;
      this.open.set(ex.key, {
        method: ex.method,
        connectionId: ex.connectionId,
        jsonRpcId: ex.id,
        frameSeq: ex.requestSeq,
        tool: ex.target,
        timeUs: ex.startUs,
      });
    } else if (event.type === 'exchange-completed') {
      const ex = event.exchange;
      this.open.delete(ex.key);
      if (ex.outcome !== 'unanswered') return;
      emit({
        ruleId: END_RULES.unanswered.id,
        severity: END_RULES.unanswered.severity,
        message: `${ex.method} was never answered before the connection closed`,
        where: {
          connectionId: ex.connectionId,
          exchangeKey: ex.key,
          frameSeq: ex.requestSeq,
          jsonRpcId: ex.id,
          method: ex.method,
          ...(ex.target !== undefined && { tool: ex.target }),
          timeUs: ex.startUs,
        },
      });
    }
  }

  finish(emit: Emit): void {
    for (const [key, o] of this.open) {
      emit({
        ruleId: END_RULES.pending.id,
        severity: END_RULES.pending.severity,
        message: `${o.method} was still pending when the recording ended`,
        where: {
          connectionId: o.connectionId,
          exchangeKey: key,
          frameSeq: o.frameSeq,
          jsonRpcId: o.jsonRpcId,
          method: o.method,
          ...(o.tool !== undefined && { tool: o.tool }),
          timeUs: o.timeUs,
        },
      });
    }
    this.open.clear();
    const rec = this.context?.recording;
    if (!rec) return;
    if (rec.incomplete !== undefined || rec.ended === false) {
      emit({
        ruleId: END_RULES.incomplete.id,
        severity: END_RULES.incomplete.severity,
        message: `the recording is INCOMPLETE: ${rec.incomplete ?? 'it has no end (its tap was killed, or is still writing)'}`,
        where: {},
      });
    }
    const dropped = (rec.droppedQueue ?? 0) + (rec.droppedWrite ?? 0);
    if (dropped > 0) {
      emit({
        ruleId: END_RULES.droppedEvents.id,
        severity: END_RULES.droppedEvents.severity,
        message: `the recorder dropped ${dropped} event(s) (${rec.droppedQueue ?? 0} queue full, ${rec.droppedWrite ?? 0} refused by the database)`,
        where: {},
        found: String(dropped),
        expected: '0',
      });
    }
  }
}
