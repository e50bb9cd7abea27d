/** The replay plan's growable columns of numbers (replay-plan.ts, plan-notes.ts). */
/** A growable column of numbers. */
export class Column<A extends Float64Array | Uint32Array> {
  length = 0;
  constructor(
    public data: A,
    private readonly make: (n: number) => A,
  ) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = this.make(Math.max(1024, this.data.length * 2));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): A {
    return this.data.subarray(0, this.length) as A;
  }
}
export const f64 = () => new Column(new Float64Array(0), (n) => new Float64Array(n));
export const u32 = () => new Column(new Uint32Array(0), (n) => new Uint32Array(n));
