/** The shared telemetry flags on a commander command, mapped to a TelemetryConfig. */
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { addTelemetryOptions, telemetryConfigFromOptions } from '../../src/cli/telemetry-options.js';

function parse(argv: string[], env: Record<string, string> = {}) {
  let config: ReturnType<typeof telemetryConfigFromOptions> | undefined;
  const cmd = addTelemetryOptions(new Command('tap').exitOverride()).action((opts: Record<string, unknown>) => {
    config = telemetryConfigFromOptions(opts, env);
  });
  cmd.parse(argv, { from: 'user' });
  return config!;
}

describe('telemetry options', () => {
  it('maps every flag', () => {
    const c = parse(['--otlp', 'http://127.0.0.1:4318', '--metrics', '127.0.0.1:0', '--service-name', 'svc', '--capture-content', '--inject-trace-context']);
    expect(c.traces.otlp?.url).toBe('http://127.0.0.1:4318/v1/traces');
    expect(c.metrics.prometheus).toEqual({ host: '127.0.0.1', port: 0 });
    expect(c.serviceName).toBe('svc');
    expect(c.captureContent).toBe(true);
    expect(c.injectTraceContext).toBe(true);
  });

  it('defaults to nothing exported, content not captured, nothing injected', () => {
    const c = parse([]);
    expect(c.traces).toEqual({});
    expect(c.metrics.otlp ?? c.metrics.prometheus ?? c.metrics.console).toBeUndefined();
    expect(c.captureContent).toBe(false);
    expect(c.injectTraceContext).toBe(false);
  });

  it('lists the flags and the OTEL variables in --help', () => {
    const help = addTelemetryOptions(new Command('tap')).helpInformation() + '';
    for (const f of ['--otlp <url>', '--metrics <host:port>', '--service-name <name>', '--capture-content', '--inject-trace-context'])
      expect(help).toContain(f);
  });
});
