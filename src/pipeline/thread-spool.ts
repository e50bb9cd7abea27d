/**
 * The recording's side of a {@link PipelineThread}'s start: the spool and indexer, opened at once
 * in the tap's thread (indexer-relay.ts), with the recorder's share of the sinks. Live spans and
 * the recording share one span-id seed, so that `mcptap export` reproduces the live span ids.
 */
import { systemClockOrigin } from '../util/clock.js';
import { SeededSpanIds } from '../telemetry/seeded-span-ids.js';
import { TapSpool } from './indexer-relay.js';
import type { PipelineThreadOptions } from './pipeline-worker-spawn.js';

/** `opts` with the seed both sides use, and the spool (undefined without a recording). */
export function openThreadSpool(opts: PipelineThreadOptions): { opts: PipelineThreadOptions; tapSpool: TapSpool | undefined } {
  if (!opts.recording) return { opts, tapSpool: undefined };
  const seeded = opts.sinks.spanIdSeed === undefined ? { ...opts, sinks: { ...opts.sinks, spanIdSeed: SeededSpanIds.randomSeed() } } : opts;
  const { telemetry: _telemetry, check, ...recordOnly } = seeded.sinks;
  const tapSpool = TapSpool.open({
    recording: opts.recording,
    sinks: { ...recordOnly, ...(check && { check: { ...check, speak: true } }) }, // the recorder's pipeline says the findings
    logLevel: opts.logLevel,
    clockOrigin: systemClockOrigin,
    ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}),
    logger: opts.logger,
    onFatal: (err) => opts.onFatal?.(err),
  });
  return { opts: seeded, tapSpool };
}
