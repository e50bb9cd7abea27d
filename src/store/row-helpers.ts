/** Small helpers shared by the row mappers (rows.ts, exchange-rows.ts). */

/** One bound SQL value. */
export type Value = string | number | bigint | Buffer | null;
export type Row = Record<string, unknown>;

export const n = <T>(v: T | undefined | null): T | null => (v === undefined ? null : v);
export const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
export const bool = (v: boolean | undefined): number => (v ? 1 : 0);

/** Sets `key` on `o` only when the column is not NULL, so absent optional fields stay absent. */
export function opt<T extends object, K extends keyof T>(o: T, key: K, v: unknown, map: (x: never) => T[K] = (x) => x as T[K]): void {
  if (v !== null && v !== undefined) o[key] = map(v as never);
}
