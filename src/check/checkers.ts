/**
 * The registry: every rule family's checker factory, in catalogue order. A family plugs in with one
 * line here (and one section per rule in docs/check.md, which a test enforces).
 */
import type { CheckerFactory } from './checker.js';
import { protocolAnomalyChecker } from './rules/protocol-anomalies.js';
import { protocolSchemaChecker } from './rules/protocol-schema-rule.js';

export const CHECKER_FACTORIES: readonly CheckerFactory[] = [
  protocolSchemaChecker,
  protocolAnomalyChecker,
  // contract (src/check/rules/tool-contracts.ts), surface (tool-surface.ts), drift, assert: one line each
];
