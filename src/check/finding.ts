/**
 * What `mcptap check` says: findings as plain data. Rules produce them (offline on a recording, live
 * in a tap, on replayed traffic); report/ renders them as text, JSON, JUnit and SARIF.
 */
import type { JsonRpcId } from '../model/jsonrpc.js';

export type Severity = 'error' | 'warning' | 'note';

/** Rule families: one JUnit suite each, and the first segment of every rule id. */
export type RuleFamily = 'protocol' | 'contract' | 'surface' | 'drift' | 'assert';

/** A rule's stable identity and its page in docs/check.md (the SARIF rule descriptor comes from here). */
export interface RuleInfo {
  /** `family/name`, stable across releases: CI configurations and SARIF history key on it. */
  id: string;
  family: RuleFamily;
  severity: Severity;
  /** One line: what the rule requires. */
  title: string;
  /** A few lines: why it matters and how to fix a finding. */
  help: string;
  /** The option names a rules file may set beside `severity` (any other key is refused). */
  options?: readonly string[];
}

/** Where a finding is: the exchange or message it is about, or the tool-surface item. */
export interface FindingLocation {
  connectionId?: string;
  sessionId?: string;
  /** The exchange's key in the event stream (resolved to a recording row by the renderer when it can). */
  exchangeKey?: string;
  /** The frame's sequence number, for messages outside any exchange (notifications, invalid lines). */
  frameSeq?: number;
  /** The exchange's row in the recording (`mcptap show FILE --exchange '#row'`), filled in by the offline runner. */
  row?: number;
  jsonRpcId?: JsonRpcId;
  method?: string;
  /** Tool or prompt name, or resource URI. */
  tool?: string;
  /** Who sent the offending message. */
  side?: 'client' | 'server';
  timeUs?: number;
  /** Tool-surface and drift findings: the item of the surface they are about (a SARIF logical location). */
  subject?: { kind: 'tool' | 'prompt' | 'resource' | 'resourceTemplate'; name: string };
}

export interface Finding {
  ruleId: string;
  severity: Severity;
  message: string;
  where: FindingLocation;
  /** JSON Pointer into the offending message (from its root: `/params/arguments/city`). */
  pointer?: string;
  expected?: string;
  found?: string;
  /** Protocol version whose schema or rules applied. */
  specVersion?: string;
  /** The schema rule that failed, as a JSON Pointer into the schema (`#/$defs/Tool/required`). */
  schemaRule?: string;
}
