/** `n` and its noun, singular for exactly one: `counted(1, 'call')` is "1 call", `counted(3, 'call')` "3 calls". */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
