/**
 * User-written regular expressions compiled for V8's linear-time engine (the `l` flag): matching
 * takes time linear in the input whatever the pattern, so a rule cannot hang a tap on a long value
 * (catastrophic backtracking). V8 refuses, at compile time, what that engine cannot run in linear
 * time: backreferences, lookahead and lookbehind. The engine sits behind a V8 flag; it is turned on
 * here, once per process, before the first such pattern (it changes nothing for other patterns).
 */
import { setFlagsFromString } from 'node:v8';

let enabled = false;

/** A global regexp for `source` that runs in linear time; throws an Error saying why it cannot. */
export function linearRegExp(source: string): RegExp {
  if (!enabled) {
    setFlagsFromString('--enable-experimental-regexp-engine');
    enabled = true;
  }
  try {
    return new RegExp(source, 'lg');
  } catch (err) {
    const msg = (err as Error).message;
    if (/linear time/i.test(msg))
      throw new Error('cannot run in linear time: backreferences (\\1, \\k<name>) and lookaround ((?=, (?!, (?<=, (?<!) are not allowed');
    throw new Error(`not a valid regular expression: ${msg.replace(/^Invalid regular expression: /, '')}`);
  }
}
