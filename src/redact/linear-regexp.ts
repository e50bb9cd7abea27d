/**
 * User-written regular expressions compiled for V8's linear-time engine (the `l` flag): matching
 * takes time linear in the input whatever the pattern, so no rule can make a tap hang on a long
 * value (catastrophic backtracking, e.g. `(a+)+$`). That engine has no backreferences and no
 * lookaround, and repeats a counted repetition at most 16 times (`{16}`, `{15,}`): such patterns are
 * refused, saying which. The engine sits behind a V8 flag, turned on here once per process before
 * the first such pattern (it changes nothing for other regexps).
 */
import { setFlagsFromString } from 'node:v8';
import { McptapError } from '../errors.js';

let enabled = false;

/** A global regexp for `source` that runs in linear time; throws an Error saying why it cannot. */
export function linearRegExp(source: string): RegExp {
  const unsupported = backtrackingOnly(source);
  if (unsupported)
    throw new McptapError('MCPTAP_BAD_REGEXP', `cannot run in linear time: ${unsupported} is not allowed (backreferences and lookaround never are)`);
  if (!enabled) {
    setFlagsFromString('--enable-experimental-regexp-engine');
    enabled = true;
  }
  try {
    return new RegExp(source, 'lg');
  } catch (err) {
    const msg = (err as Error).message;
    if (/linear time/i.test(msg))
      throw new McptapError(
        'MCPTAP_BAD_REGEXP',
        'cannot run in linear time: a counted repetition may repeat at most 16 times ({16}, {15,}); write longer ones with + or *',
      );
    throw new McptapError('MCPTAP_BAD_REGEXP', `not a valid regular expression: ${msg.replace(/^Invalid regular expression: /, '')}`);
  }
}

/** The first backreference or lookaround in `source` (outside character classes), if any. */
function backtrackingOnly(source: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (!inClass && /[1-9]/.test(next)) return `the backreference \\${next}`;
      if (!inClass && next === 'k' && source[i + 2] === '<') return 'the backreference \\k<…>';
      i++;
    } else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(' && source[i + 1] === '?') {
      const look = /^\(\?(<?[=!])/.exec(source.slice(i, i + 4));
      if (look) return `the lookaround (?${look[1]}`;
    }
  }
  return undefined;
}
