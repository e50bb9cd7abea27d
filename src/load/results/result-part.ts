/**
 * The result algebra: each statistics family of a load result (request groups, cancellation,
 * checks, listen streams) is one {@link ResultPart}. A part is held decoded (counters and live HDR
 * histograms) while a run records into it and while a merge adds parts up; it is encoded only
 * when a result is written (`toJSON`) and decoded once when one is read (its family's `fromJSON`).
 */
import { decodeHistogram, newHistogram, type EncodedHistogram, type Histogram } from '../../util/histogram.js';

export interface ResultPart<In extends unknown[], Json> {
  /** Count one observation (a sample, a cancelled call, a check's verdict, a notification). */
  record(...input: In): void;
  /** Add another part of the same family into this one, as if one run had recorded both. */
  merge(other: this): void;
  /** The part as the result file holds it (histograms encoded, summaries recomputed). */
  toJSON(): Json;
}

/** A histogram of a result file, decoded; absent ones (older files) are empty. */
export function histogramFromJSON(e: EncodedHistogram | undefined): Histogram {
  return e ? decodeHistogram(e.hdr) : newHistogram();
}

/**
 * Parts by key (method, tool, step): `other`'s added in. Every key is merged, a missing side as an
 * empty part, so each part ends as a merge leaves it (cancel evidence in verdict order, say).
 */
export function mergePartMaps<P extends ResultPart<never, unknown>>(into: Map<string, P>, other: ReadonlyMap<string, P>, empty: () => P): void {
  for (const k of new Set([...into.keys(), ...other.keys()])) {
    let mine = into.get(k);
    if (!mine) into.set(k, (mine = empty()));
    mine.merge(other.get(k) ?? empty());
  }
}

/** Parts by key as the result file holds them: keys sorted, so a file does not depend on arrival order. */
export function partMapToJSON<J>(m: ReadonlyMap<string, ResultPart<never, J>>): Record<string, J> {
  return Object.fromEntries([...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, p]) => [k, p.toJSON()]));
}

/** Parts by key from a result file. */
export function partMapFromJSON<J, P>(r: Record<string, J> | undefined, fromJSON: (j: J) => P): Map<string, P> {
  return new Map(Object.entries(r ?? {}).map(([k, j]) => [k, fromJSON(j)]));
}
