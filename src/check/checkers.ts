/**
 * The registry: every rule family's checker factory, in catalogue order. A family plugs in with one
 * line here (and one section per rule in docs/check.md, which a test enforces). The rules file's
 * assertions (`assert/...`) are added per run: their ids are the user's.
 */
import type { CheckerFactory } from './checker.js';
import { protocolAnomalyChecker } from './rules/protocol-anomalies.js';
import { protocolSchemaChecker } from './rules/protocol-schema-rule.js';
import { toolContracts } from './rules/tool-contracts.js';
import { toolSurface } from './rules/tool-surface.js';
import { drift } from './rules/drift.js';

export const CHECKER_FACTORIES: readonly CheckerFactory[] = [protocolSchemaChecker, protocolAnomalyChecker, toolContracts, toolSurface, drift];
