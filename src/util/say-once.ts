/**
 * "Say once, then count": the first occurrence of each topic is said, the rest only counted, so a
 * failure at traffic rate costs one line on stderr, not one per request. A message is built only
 * when it is said.
 */
export class SayOnce {
  private readonly counts = new Map<string, number>();

  constructor(private readonly say: (message: string) => void) {}

  /** Counts one occurrence of `topic`; says `message()` if it is the first (since `forget`). Returns the count. */
  count(topic: string, message: () => string): number {
    const n = (this.counts.get(topic) ?? 0) + 1;
    this.counts.set(topic, n);
    if (n === 1) this.say(message());
    return n;
  }

  /** Whether `topic` was said (and not forgotten since). */
  said(topic: string): boolean {
    return this.counts.has(topic);
  }

  /** Everything is news again: the next occurrence of each topic is said. */
  forgetAll(): void {
    this.counts.clear();
  }
}
