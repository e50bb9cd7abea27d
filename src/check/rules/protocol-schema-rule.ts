/**
 * Protocol conformance: every JSON-RPC message against the official schema of the protocol version
 * its connection negotiated (initialize's result) or its request carries (2026-07-28). A message of
 * an unknown version is not guessed at: one note per such version says how many went unchecked.
 */
import type { Checker, CheckerFactory, Emit } from '../checker.js';
import type { Finding, RuleInfo } from '../finding.js';
import type { Exchange } from '../../model/exchange.js';
import type { MessageFrame } from '../../model/frame.js';
import { ProtocolSchemas, type MessageRole } from '../protocol-schema.js';
import { isSchemaVersion, SCHEMA_VERSIONS } from '../schema-files.js';

const rule = (name: string, severity: RuleInfo['severity'], title: string, help: string): RuleInfo => ({
  id: `protocol/${name}`,
  family: 'protocol',
  severity,
  title,
  help,
});

export const SCHEMA_RULES = {
  request: rule(
    'request-schema',
    'error',
    'Requests match the MCP schema of their protocol version',
    'A request (either side) failed the definition of its method in the official MCP JSON Schema of the negotiated version. Peers built on an SDK may reject it. Fix the sender so the member named by the pointer has the shape the schema rule requires.',
  ),
  result: rule(
    'result-schema',
    'error',
    'Results match the MCP schema of their request',
    'A result failed the definition its request calls for (tools/call -> CallToolResult) in the official MCP JSON Schema. SDK clients validate results and may drop the whole answer (a tools/list with one bad tool loses every tool). Fix the member named by the pointer.',
  ),
  notification: rule(
    'notification-schema',
    'error',
    'Notifications match the MCP schema of their protocol version',
    'A notification failed the definition of its method in the official MCP JSON Schema of the negotiated version. Fix the member named by the pointer.',
  ),
  error: rule(
    'error-schema',
    'error',
    'Error responses are well-formed JSON-RPC errors',
    'An error response failed the JSON-RPC error definition of the MCP schema (an integer code and a string message are required).',
  ),
  unknownVersion: rule(
    'unknown-version',
    'note',
    'Every message has a known protocol version',
    `Messages whose connection never negotiated a version mcptap has a schema for (${SCHEMA_VERSIONS.join(', ')}) are not checked against a schema; this note says how many, once per version.`,
  ),
} as const;

/** Messages held per connection until initialize is answered; connections held at once. */
const MAX_HELD = 64;
const MAX_HELD_CONNECTIONS = 1_000;

const SCHEMAS = new ProtocolSchemas(); // compiled schemas are shared by every run: compiling is the costly part

export const protocolSchemaChecker: CheckerFactory = () => new ProtocolSchemaChecker();

class ProtocolSchemaChecker implements Checker {
  readonly rules = Object.values(SCHEMA_RULES);
  /** Negotiated version per connection (from initialize's result). */
  private readonly connVersion = new Map<string, string>();
  /** Requests already checked when their exchange started (bounded by the open exchanges). */
  private readonly checkedRequests = new Set<string>();
  /** Messages not checked, by the version they claimed (`(none)`: never negotiated; `(overflow)`: not held). */
  private readonly unchecked = new Map<string, number>();
  /** Per connection whose initialize is unanswered: checks of messages pipelined before the answer. */
  private readonly held = new Map<string, Array<() => void>>();
  /** Connections whose initialize was answered (with or without a version): nothing more is held. */
  private readonly settled = new Set<string>();

  onEvent(event: Parameters<Checker['onEvent']>[0], emit: Emit): void {
    switch (event.type) {
      case 'exchange-started':
        // initialize's request waits for its result: the version it is checked against is the one negotiated.
        if (event.exchange.method !== 'initialize') {
          this.checkExchangeMessage(event.exchange, 'request', emit);
          this.checkedRequests.add(event.exchange.key);
        }
        return;
      case 'exchange-completed': {
        const ex = event.exchange;
        const negotiated =
          ex.method === 'initialize' ? (ex.response as { result?: { protocolVersion?: unknown } } | undefined)?.result?.protocolVersion : undefined;
        if (typeof negotiated === 'string') this.connVersion.set(ex.connectionId, negotiated);
        if (ex.method === 'initialize') this.release(ex.connectionId);
        if (!this.checkedRequests.delete(ex.key)) this.checkExchangeMessage(ex, 'request', emit);
        if (ex.response) this.checkExchangeMessage(ex, 'error' in ex.response ? 'error' : 'result', emit);
        return;
      }
      case 'frame':
        if (event.frame.kind === 'message' && event.frame.messageKind === 'notification') this.checkNotification(event.frame, emit);
        return;
      case 'connection-closed':
        this.release(event.connectionId); // never negotiated: the held messages count as unchecked
        this.settled.delete(event.connectionId);
        this.connVersion.delete(event.connectionId);
        return;
      default:
        return;
    }
  }

  finish(emit: Emit): void {
    for (const conn of [...this.held.keys()]) this.release(conn);
    for (const [version, n] of this.unchecked) {
      emit({
        ruleId: SCHEMA_RULES.unknownVersion.id,
        severity: SCHEMA_RULES.unknownVersion.severity,
        message: `${n} message(s) not checked against a schema: ${reason(version)}`,
        where: {},
        found: version,
        expected: SCHEMA_VERSIONS.join(' | '),
      });
    }
  }

  /** Holds a check until the connection's initialize is answered; false when it cannot be held. */
  private hold(conn: string, check: () => void): boolean {
    let list = this.held.get(conn);
    if (!list) {
      if (this.held.size >= MAX_HELD_CONNECTIONS) return false;
      list = [];
      this.held.set(conn, list);
    }
    if (list.length >= MAX_HELD) {
      this.unchecked.set('(overflow)', (this.unchecked.get('(overflow)') ?? 0) + 1);
      return true;
    }
    list.push(check);
    return true;
  }

  /** initialize answered (or the connection ended): run the held checks with what was negotiated. */
  private release(conn: string): void {
    this.settled.add(conn);
    const list = this.held.get(conn);
    this.held.delete(conn);
    for (const run of list ?? []) run();
  }

  private versionOf(ex: Exchange): string | undefined {
    if (ex.method === 'initialize') {
      const v = (ex.response as { result?: { protocolVersion?: unknown } } | undefined)?.result?.protocolVersion;
      return typeof v === 'string' ? v : undefined;
    }
    return ex.protocolVersion ?? this.connVersion.get(ex.connectionId);
  }

  private checkExchangeMessage(ex: Exchange, role: MessageRole, emit: Emit): void {
    const message = (role === 'request' ? ex.request : ex.response) as unknown as Record<string, unknown>;
    const version = this.versionOf(ex);
    const requestSide = ex.direction === 'c2s' ? 'client' : 'server';
    const side = role === 'request' ? requestSide : requestSide === 'client' ? 'server' : 'client';
    this.check(version, role, ex.method, message, emit, {
      connectionId: ex.connectionId,
      sessionId: ex.sessionId,
      exchangeKey: ex.key,
      frameSeq: role === 'request' ? ex.requestSeq : (ex.responseSeq ?? ex.requestSeq),
      jsonRpcId: ex.id,
      method: ex.method,
      tool: ex.target,
      side,
      timeUs: role === 'request' ? ex.startUs : (ex.endUs ?? ex.startUs),
    });
  }

  private checkNotification(frame: MessageFrame, emit: Emit): void {
    const message = frame.message as unknown as Record<string, unknown>;
    const method = typeof message.method === 'string' ? message.method : undefined;
    const version = frame.context?.headerProtocolVersion ?? this.connVersion.get(frame.connectionId);
    this.check(version, 'notification', method, message, emit, {
      connectionId: frame.connectionId,
      sessionId: frame.context?.sessionId,
      frameSeq: frame.seq,
      method,
      side: frame.direction === 'c2s' ? 'client' : 'server',
      timeUs: frame.timeUs,
    });
  }

  private check(
    version: string | undefined,
    role: MessageRole,
    method: string | undefined,
    message: Record<string, unknown>,
    emit: Emit,
    where: Finding['where'],
  ): void {
    const conn = where.connectionId;
    if (
      version === undefined &&
      conn !== undefined &&
      !this.settled.has(conn) &&
      this.hold(conn, () => this.check(this.connVersion.get(conn), role, method, message, emit, where))
    ) {
      return;
    }
    if (!isSchemaVersion(version)) {
      const k = version ?? '(none)';
      this.unchecked.set(k, (this.unchecked.get(k) ?? 0) + 1);
      return;
    }
    const { definition, issues } = SCHEMAS.get(version).validateMessage(role, method, message);
    const info = SCHEMA_RULES[role];
    for (const issue of issues) {
      emit({
        ruleId: info.id,
        severity: info.severity,
        message: `${definition}: ${issue.pointer || '/'} ${issue.message}`,
        where: clean(where),
        pointer: issue.pointer,
        expected: issue.expected,
        found: issue.found,
        specVersion: version,
        schemaRule: issue.schemaRule,
      });
    }
  }
}

/** Why messages of a version key went unchecked. */
function reason(version: string): string {
  if (version === '(none)') return 'no protocol version was negotiated on their connection';
  if (version === '(overflow)') return `sent before initialize was answered, beyond the ${MAX_HELD} held per connection`;
  return `no schema for protocol version ${version}`;
}

/** The location without its undefined members (so JSON output stays small and stable). */
function clean(where: Finding['where']): Finding['where'] {
  return Object.fromEntries(Object.entries(where).filter(([, v]) => v !== undefined)) as Finding['where'];
}
