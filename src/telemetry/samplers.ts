/**
 * The SDK's Sampler for a {@link SamplerConfig}, the classes the SDK's own environment reader builds. All six decide from the parent and trace id alone,
 * never the span's name, attributes or links: the tap may decide before it builds a span (span-data.ts), and the minter decides as the tracer will.
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
