/**
 * Scrape-endpoint names end with their unit (`_seconds`, `_per_second`), as Prometheus' conventions ask and its OTLP receiver does; the OTel JS
 * exporter does not, so descriptors are renamed before serializing and dashboards find the same names scraped or pushed. Unit words follow
 * Prometheus' OTLP translator (`s` -> `seconds`, `{...}` -> nothing, `X/Y` -> `X_per_Y`); `_total` for counters is the exporter's own.
 */
import type { CollectionResult, MetricData } from '@opentelemetry/sdk-metrics';

const MAIN_UNITS: Readonly<Record<string, string>> = {
  d: 'days',
  h: 'hours',
  min: 'minutes',
  s: 'seconds',
  ms: 'milliseconds',
  us: 'microseconds',
  ns: 'nanoseconds',
  By: 'bytes',
  KiBy: 'kibibytes',
  MiBy: 'mebibytes',
  KBy: 'kilobytes',
  MBy: 'megabytes',
  '%': 'percent',
};

const PER_UNITS: Readonly<Record<string, string>> = { s: 'second', min: 'minute', h: 'hour', d: 'day' };

/** The words a unit adds to a Prometheus name (`s` -> `seconds`, `{request}/s` -> `per_second`), or ''. */
export function unitSuffix(unit: string): string {
  const [main = '', per] = unit.split('/', 2);
  const words: string[] = [];
  const m = clean(main);
  if (m) words.push(MAIN_UNITS[m] ?? m);
  const p = per === undefined ? '' : clean(per);
  if (p) words.push(`per_${PER_UNITS[p] ?? p}`);
  return words.join('_');
}

/** Annotations (`{request}`) and the dimensionless `1` say nothing a name needs. */
function clean(unit: string): string {
  const u = unit.replace(/\{[^}]*\}/g, '').trim();
  return u === '1' || /[^A-Za-z0-9%]/.test(u) ? '' : u;
}

/** `name` with its unit's words appended, unless the name already ends with them. */
export function nameWithUnit(name: string, unit: string): string {
  const suffix = unitSuffix(unit);
  if (!suffix) return name;
  const flat = name.replace(/[^A-Za-z0-9]+/g, '_');
  return flat.endsWith(`_${suffix}`) ? name : `${name}_${suffix}`;
}

/** The collection with every metric renamed by {@link nameWithUnit} (the data points are shared). */
export function withUnitSuffixes(result: CollectionResult): CollectionResult {
  const scopeMetrics = result.resourceMetrics.scopeMetrics.map((sm) => ({
    ...sm,
    metrics: sm.metrics.map((m): MetricData => {
      const name = nameWithUnit(m.descriptor.name, m.descriptor.unit);
      return name === m.descriptor.name ? m : { ...m, descriptor: { ...m.descriptor, name } };
    }),
  }));
  return { ...result, resourceMetrics: { ...result.resourceMetrics, scopeMetrics } };
}
