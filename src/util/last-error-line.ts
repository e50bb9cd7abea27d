/**
 * The line of a process's stderr that says why it ended: the last one that is neither a stack
 * frame nor Node's closing version line (a crashed Node server ends with both).
 */
export function lastErrorLine(stderr: string, max = 200): string | undefined {
  const line = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^at /.test(l) && !/^Node\.js v\d/.test(l))
    .pop();
  return line?.slice(0, max);
}
