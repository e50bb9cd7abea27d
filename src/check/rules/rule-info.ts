/** Rule descriptors of one family: `rulesOf('drift')('removed', …)` has the id `drift/removed`. */
import type { RuleFamily, RuleInfo, Severity } from '../finding.js';

export const rulesOf =
  (family: RuleFamily) =>
  (name: string, severity: Severity, title: string, help: string, options?: readonly string[]): RuleInfo => ({
    id: `${family}/${name}`,
    family,
    severity,
    title,
    help,
    ...(options && { options }),
  });
