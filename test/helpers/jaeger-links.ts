/**
 * The dashboards' Jaeger data links as test data: filled in the way Grafana fills a data link
 * (`${__field.labels.X}`, `:percentencode`, `${__value.raw}`, `${__from}`/`${__to}` in epoch ms,
 * dashboard variables), and checked against the URL shape of Jaeger's query API: the UI's
 * `/search?…` takes the same parameters as `GET /api/traces?…` (service, operation, tags as JSON,
 * minDuration/maxDuration as Go durations, start/end in µs, limit, lookback).
 */
import type { PromSample } from './prometheus.js';

export interface LinkContext {
  from: number;
  to: number;
  vars: Record<string, string>;
  series: PromSample;
}

export function fillLink(url: string, ctx: LinkContext): string {
  return url.replace(/\$\{([^}:]+)(?::(\w+))?\}/g, (whole, name: string, format: string | undefined) => {
    let value: string | undefined;
    if (name.startsWith('__field.labels.')) value = ctx.series.metric[name.slice('__field.labels.'.length)];
    else if (name === '__value.raw') value = String(ctx.series.value);
    else if (name === '__from') value = String(ctx.from);
    else if (name === '__to') value = String(ctx.to);
    else value = ctx.vars[name];
    if (value === undefined) throw new Error(`link variable ${whole} has no value`);
    return format === 'percentencode' ? encodeURIComponent(value) : value;
  });
}

const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const API_PARAMS = new Set(['service', 'operation', 'tags', 'minDuration', 'maxDuration', 'limit', 'start', 'end', 'lookback']);

/** The Jaeger query API request a UI search link stands for; throws where the link does not fit that API. */
export function jaegerApiUrlOf(uiUrl: string): URL {
  const u = new URL(uiUrl);
  if (u.pathname !== '/search') throw new Error(`not a Jaeger search link: ${uiUrl}`);
  const api = new URL('/api/traces', u);
  for (const [k, v] of u.searchParams) {
    if (!API_PARAMS.has(k)) throw new Error(`${k} is not a parameter of /api/traces`);
    api.searchParams.append(k, v);
  }
  const p = api.searchParams;
  if (!p.get('service')) throw new Error('/api/traces needs a service');
  for (const k of ['minDuration', 'maxDuration']) if (p.has(k) && !GO_DURATION.test(p.get(k)!)) throw new Error(`${k}=${p.get(k)} is not a Go duration`);
  for (const k of ['start', 'end', 'limit']) if (p.has(k) && !/^\d+$/.test(p.get(k)!)) throw new Error(`${k}=${p.get(k)} is not an integer`);
  if (p.has('tags')) {
    const tags = JSON.parse(p.get('tags')!) as unknown;
    if (typeof tags !== 'object' || tags === null || Object.values(tags).some((v) => typeof v !== 'string'))
      throw new Error('tags must be a JSON object of strings');
  }
  return api;
}
