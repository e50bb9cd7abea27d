/**
 * Unit suffixes on the scrape endpoint (src/telemetry/prometheus-units.ts), as Prometheus' naming
 * conventions and its OTLP receiver have them; test/dashboards checks the whole exporter's names
 * against an OTLP export.
 */
import { describe, expect, it } from 'vitest';
import { nameWithUnit, unitSuffix } from '../../src/telemetry/prometheus-units.js';

describe('unit suffixes', () => {
  it('spells UCUM units as Prometheus words and drops annotations', () => {
    expect(unitSuffix('s')).toBe('seconds');
    expect(unitSuffix('ms')).toBe('milliseconds');
    expect(unitSuffix('By')).toBe('bytes');
    expect(unitSuffix('{request}')).toBe('');
    expect(unitSuffix('1')).toBe('');
    expect(unitSuffix('{iteration}/s')).toBe('per_second');
    expect(unitSuffix('By/s')).toBe('bytes_per_second');
  });

  it('appends the suffix once', () => {
    expect(nameWithUnit('mcp.client.operation.duration', 's')).toBe('mcp.client.operation.duration_seconds');
    expect(nameWithUnit('http.server.duration_seconds', 's')).toBe('http.server.duration_seconds');
    expect(nameWithUnit('mcptap.exchanges', '{exchange}')).toBe('mcptap.exchanges');
  });
});
