/**
 * One comparison for every `FOUND OP BOUND` the tool judges: load thresholds write `==`, rules
 * files write `=`; both mean strict equality. Strings compare as JavaScript orders them.
 */
export type CompareOp = '=' | '==' | '!=' | '<' | '<=' | '>' | '>=';

export function compare<T extends number | string>(found: T, op: CompareOp, bound: T): boolean {
  switch (op) {
    case '=':
    case '==':
      return found === bound;
    case '!=':
      return found !== bound;
    case '<':
      return found < bound;
    case '<=':
      return found <= bound;
    case '>':
      return found > bound;
    case '>=':
      return found >= bound;
  }
}
