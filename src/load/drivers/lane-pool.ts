/**
 * Lanes for the executors: a fixed lane per virtual user (closed model) or a free list of lanes
 * borrowed per iteration (open model; at most as many lanes as iterations ever ran at once).
 */
import type { Lane } from './driver.js';

export class LanePool {
  private readonly byVu = new Map<number, Lane>();
  private readonly free: Lane[] = [];
  private readonly all: Lane[] = [];
  private nextId = 0;

  constructor(private readonly create: (id: number) => Lane) {}

  forVu(vu: number): Lane {
    let lane = this.byVu.get(vu);
    if (!lane) {
      lane = this.create(vu);
      this.byVu.set(vu, lane);
      this.all.push(lane);
    }
    return lane;
  }

  acquire(): Lane {
    const lane = this.free.pop();
    if (lane) return lane;
    const created = this.create(1_000_000 + this.nextId++);
    this.all.push(created);
    return created;
  }

  release(lane: Lane): void {
    this.free.push(lane);
  }

  get size(): number {
    return this.all.length;
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled(this.all.map((l) => l.close()));
  }
}
