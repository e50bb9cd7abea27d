/**
 * The SDK's Sampler for a {@link SamplerConfig} (OTEL_TRACES_SAMPLER, resolved in
 * telemetry-config.ts): the same classes the SDK's own environment reader builds, so the ratio rule
 * is the SDK's (TraceIdRatioBasedSampler on the trace id). All six are deterministic for a given
 * parent and trace id and read neither the span's name, attributes nor links: the tap may decide
 * before it builds a span (span-data.ts, `decide`) and the minter of injected contexts
 * decides the same as the tracer later does.
 */
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import type { SamplerConfig } from './telemetry-config.js';

export function samplerFor(config: SamplerConfig | undefined): Sampler {
  switch (config?.name ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config?.ratio ?? 1);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config?.ratio ?? 1) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** No span can ever be sampled: a tap that propagates no context needs no span sink at all. */
export function samplesNothing(config: SamplerConfig | undefined): boolean {
  return config?.name === 'always_off' || (config?.name === 'traceidratio' && config.ratio === 0);
}
