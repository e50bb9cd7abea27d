/** resolveTelemetryConfig: OTEL_* variables and flags -> typed config (pure, no IO). */
import { describe, expect, it } from 'vitest';
import { McptapError } from '../../src/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { parseHostPort, resolveTelemetryConfig, telemetryEnabled } from '../../src/telemetry/telemetry-config.js';

describe('resolveTelemetryConfig', () => {
  it('exports nothing when nothing is set', () => {
    const c = resolveTelemetryConfig({}, {});
    expect(telemetryEnabled(c)).toBe(false);
    expect(c.serviceName).toBe('mcptap');
  });

  it('--otlp enables OTLP traces and metrics at <base>/v1/<signal>', () => {
    const c = resolveTelemetryConfig({ otlp: 'http://collector:4318/' }, {});
    expect(c.traces.otlp).toEqual({ url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf', headers: {}, timeoutMillis: 10_000 });
    expect(c.metrics.otlp?.url).toBe('http://collector:4318/v1/metrics');
    expect(resolveTelemetryConfig({ otlp: 'https://x.example/otel/v1/traces' }, {}).metrics.otlp?.url).toBe('https://x.example/otel/v1/metrics');
  });

  it('follows the standard endpoint, protocol and header variables; signal-specific ones win', () => {
    const c = resolveTelemetryConfig(
      {},
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-a=1',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-a=2',
      },
    );
    expect(c.traces.otlp).toMatchObject({ url: 'http://traces:9999/custom', protocol: 'http/json', headers: { authorization: 'Bearer abc', 'x-a': '2' } });
    expect(c.metrics.otlp).toMatchObject({ url: 'http://base:4318/v1/metrics', headers: { authorization: 'Bearer abc', 'x-a': '1' } });
    // The flag wins over the environment.
    expect(resolveTelemetryConfig({ otlp: 'http://flag:1' }, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env:2/x' }).traces.otlp?.url).toBe(
      'http://flag:1/v1/traces',
    );
  });

  it('honours OTEL_*_EXPORTER lists: none, console, otlp with the default endpoint, prometheus', () => {
    const none = resolveTelemetryConfig({ otlp: 'http://c:4318' }, { OTEL_TRACES_EXPORTER: 'none' });
    expect(none.traces).toEqual({});
    expect(none.metrics.otlp).toBeDefined();
    const consoleOnly = resolveTelemetryConfig({}, { OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' });
    expect(consoleOnly.traces).toEqual({ console: true });
    expect(resolveTelemetryConfig({}, { OTEL_TRACES_EXPORTER: 'otlp' }).traces.otlp?.url).toBe('http://localhost:4318/v1/traces');
    const prom = resolveTelemetryConfig({}, { OTEL_METRICS_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '9465' });
    expect(prom.metrics.prometheus).toEqual({ host: 'localhost', port: 9465 });
    expect(prom.traces).toEqual({});
  });

  it('takes the service name from the flag, then OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES', () => {
    const env = { OTEL_SERVICE_NAME: 'env-name', OTEL_RESOURCE_ATTRIBUTES: 'service.name=attr-name,k=v%2Cw' };
    expect(resolveTelemetryConfig({ serviceName: 'flag-name' }, env).serviceName).toBe('flag-name');
    expect(resolveTelemetryConfig({}, env).serviceName).toBe('env-name');
    const c = resolveTelemetryConfig({}, { OTEL_RESOURCE_ATTRIBUTES: env.OTEL_RESOURCE_ATTRIBUTES });
    expect(c.serviceName).toBe('attr-name');
    expect(c.resourceAttributes.k).toBe('v,w');
  });

  it('OTEL_SDK_DISABLED ignores the environment but not the flags', () => {
    const env = { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(telemetryEnabled(resolveTelemetryConfig({}, env))).toBe(false);
    expect(resolveTelemetryConfig({ metrics: ':0' }, env).metrics.prometheus).toEqual({ host: '127.0.0.1', port: 0 });
  });

  it('reads an empty variable as unset (the OTel spec), as ${VAR} templates leave them', () => {
    const c = resolveTelemetryConfig(
      { otlp: 'http://c:4318' },
      {
        OTEL_METRICS_EXPORTER: 'prometheus,otlp',
        OTEL_EXPORTER_PROMETHEUS_HOST: '',
        OTEL_EXPORTER_PROMETHEUS_PORT: ' ',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '',
        OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '',
        OTEL_SERVICE_NAME: '',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs',
      },
    );
    // An empty host must not become '' (every interface): the loopback default stays.
    expect(c.metrics.prometheus).toEqual({ host: 'localhost', port: 9464 });
    expect(c.traces.otlp).toMatchObject({ protocol: 'http/json', timeoutMillis: 2500 });
    expect(c.serviceName).toBe('from-attrs');
  });

  it('names the variable that holds a bad value', () => {
    expect(() => resolveTelemetryConfig({ otlp: 'http://c' }, { OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: 'abc' })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=abc/);
    expect(() =>
      resolveTelemetryConfig({ otlp: 'http://c' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }),
    ).toThrow(/OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc/);
  });

  it('parses --metrics HOST:PORT forms', () => {
    expect(parseHostPort('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(parseHostPort('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(parseHostPort(':9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseHostPort('9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    for (const bad of ['host', 'host:', 'host:99999', 'a:b:c']) expect(() => parseHostPort(bad)).toThrow(McptapError);
  });

  it('rejects bad values as usage errors without echoing header secrets', () => {
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as McptapError;
      }
      throw new Error('expected an error');
    };
    expect(err(() => resolveTelemetryConfig({ otlp: 'not a url' }, {}))).toMatchObject({ code: 'MCPTAP_TELEMETRY_CONFIG' });
    expect(exitCodeFor(err(() => resolveTelemetryConfig({ otlp: 'not a url' }, {})))).toBe(2);
    expect(err(() => resolveTelemetryConfig({ otlp: 'ftp://x' }, {})).message).toContain('http');
    expect(err(() => resolveTelemetryConfig({}, { OTEL_TRACES_EXPORTER: 'zipkin' })).message).toContain('zipkin');
    expect(err(() => resolveTelemetryConfig({}, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).message).toContain('grpc');
    const secret = err(() => resolveTelemetryConfig({ otlp: 'http://c' }, { OTEL_EXPORTER_OTLP_HEADERS: 'Bearer-sk-live-123' }));
    expect(secret.message).not.toContain('sk-live');
  });
});
