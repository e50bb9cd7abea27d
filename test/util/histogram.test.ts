/**
 * recordUs computes the bucket index itself (integer leading-zero formula) instead of calling
 * hdr-histogram-js's recordValue: differential checks against the library, value by value and as
 * whole encoded histograms.
 */
import { describe, expect, it } from 'vitest';
import { build, JsHistogram } from 'hdr-histogram-js';
import { countsIndex, encodeHistogram, HIGHEST_US, newHistogram, recordUs } from '../../src/util/histogram.js';
import { prng } from '../../src/load/scenario/random.js';

/** Every value below 5,000, each power of two and its neighbours up to the highest, random values on a log scale. */
function probeValues(): number[] {
  const out: number[] = [];
  for (let v = 0; v < 5000; v++) out.push(v);
  for (let k = 1; k < 32; k++) for (const d of [-1, 0, 1]) if (2 ** k + d <= HIGHEST_US) out.push(2 ** k + d);
  const rnd = prng(23);
  for (let i = 0; i < 20_000; i++) out.push(Math.floor(Math.exp(rnd() * Math.log(HIGHEST_US))));
  out.push(HIGHEST_US - 1, HIGHEST_US);
  return out;
}

describe('recordUs against hdr-histogram-js', () => {
  it('puts every value in the bucket the library computes', () => {
    const lib = newHistogram() as JsHistogram;
    const wrong = probeValues().filter((v) => countsIndex(v) !== lib.countsArrayIndex(v));
    expect(wrong).toEqual([]);
    expect(countsIndex(HIGHEST_US)).toBeLessThan(lib.countsArrayLength);
  });

  it('gives the same counts, total, min, max and encoding as recordValue', () => {
    const ours = newHistogram();
    const lib = newHistogram();
    // Fractional and out-of-range inputs too: recordUs rounds and clamps before either path.
    const inputs = [...probeValues(), 12.4, 12.6, -5, HIGHEST_US + 10];
    for (const us of inputs) {
      recordUs(ours, us);
      lib.recordValue(us < 0 ? 0 : us > HIGHEST_US ? HIGHEST_US : Math.round(us));
    }
    expect(ours.totalCount).toBe(inputs.length);
    expect([ours.totalCount, ours.minNonZeroValue, ours.maxValue, ours.mean]).toEqual([lib.totalCount, lib.minNonZeroValue, lib.maxValue, lib.mean]);
    expect(encodeHistogram(ours)).toBe(encodeHistogram(lib));
  });

  it('leaves a histogram of another layout to the library', () => {
    const other = build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000, numberOfSignificantValueDigits: 2 });
    const lib = build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000, numberOfSignificantValueDigits: 2 });
    for (const v of [1, 99, 100, 101, 5000, 9999]) {
      recordUs(other, v);
      lib.recordValue(v);
    }
    expect(encodeHistogram(other)).toBe(encodeHistogram(lib));
    expect(other.getValueAtPercentile(50)).toBe(lib.getValueAtPercentile(50));
  });
});
