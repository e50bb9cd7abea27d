/**
 * Wall-clock time in microseconds since the Unix epoch, with sub-millisecond resolution from the
 * monotonic clock. Injected wherever time is read so tests can control it.
 */
export interface Clock {
  nowUs(): number;
}

const originNs = process.hrtime.bigint();
const originEpochUs = Date.now() * 1000;

export const systemClock: Clock = {
  nowUs: () => originEpochUs + Number((process.hrtime.bigint() - originNs) / 1000n),
};
