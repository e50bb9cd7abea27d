/**
 * Deterministic randomness: every random choice of a run (step mix, think time, template values,
 * random data rows) is a pure function of (seed, phase, iteration), so shards of one scenario make
 * exactly the choices one big run would make, whatever the timing.
 */

/** A 32-bit hash of small integers (splitmix-style finaliser over each part). */
export function hash32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h ^ Math.floor(p / 4294967296), 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** mulberry32: a small, fast PRNG giving uniform numbers in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The random stream of one iteration. `salt` separates uses (mix, think time, templates). */
export function iterationRandom(seed: number, phase: number, iteration: number, salt: number): () => number {
  return prng(hash32(seed, phase, iteration, salt));
}

export const SALT = { mix: 1, think: 2, template: 3, data: 4 } as const;
