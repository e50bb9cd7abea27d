/**
 * Whether an OTLP endpoint was ever reached, read from the exporters' own agents: real loopback
 * sockets, one port nothing listens on and one that accepts.
 */
import { Agent, request } from 'node:http';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeConnectError, EndpointReachability, OtlpReachability } from '../../src/telemetry/close-deadline.js';

/** A loopback port nothing listens on: listened on, then closed. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** One POST through an agent made by `factory`; resolves when it has failed or been answered. */
async function post(factory: (p: string) => Agent | Promise<Agent>, url: string): Promise<void> {
  const agent = await factory('http:');
  await new Promise<void>((resolve) => {
    const req = request(url, { method: 'POST', agent }, (res) => res.resume().on('end', resolve).on('error', resolve));
    req.on('error', () => resolve());
    req.end('x');
  });
  agent.destroy();
}

const plainAgents = () => new Agent({ keepAlive: false });

describe('endpoint reachability', () => {
  let accepting: Server;
  let upUrl: string;
  let downUrl: string;
  beforeAll(async () => {
    // Fake collector: answers every request with 200 and closes.
    accepting = createServer((s) => s.once('data', () => s.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')));
    await new Promise<void>((resolve) => accepting.listen(0, '127.0.0.1', resolve));
    upUrl = `http://127.0.0.1:${(accepting.address() as AddressInfo).port}/v1/traces`;
    downUrl = `http://127.0.0.1:${await closedPort()}/v1/traces`;
  });
  afterAll(() => new Promise<void>((resolve) => accepting.close(() => resolve())));

  it('a refused connection to a never-reached endpoint makes it unreachable, and tells the listeners', async () => {
    const reach = new OtlpReachability();
    const e = reach.endpoint(downUrl);
    let told = 0;
    reach.onChange(() => told++);
    expect(reach.reason()).toBeUndefined();
    await post(e.watch(plainAgents), downUrl);
    expect(e.unreachable).toBe('connection refused');
    expect(told).toBe(1);
    expect(reach.reason()).toBe(`OTLP endpoint ${new URL(downUrl).origin} unreachable (connection refused)`);
  });

  it('an endpoint reached once never counts as unreachable, even when it refuses later', async () => {
    const e = new EndpointReachability(new URL(upUrl).origin);
    const factory = e.watch(plainAgents);
    await post(factory, upUrl);
    expect(e.unreachable).toBeUndefined();
    e.connectFailed(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    expect(e.unreachable).toBeUndefined();
  });

  it('gives up only when every endpoint in use is unreachable (one per origin)', async () => {
    const reach = new OtlpReachability();
    const traces = reach.endpoint(downUrl);
    expect(reach.endpoint(downUrl.replace('/v1/traces', '/v1/metrics'))).toBe(traces);
    const metrics = reach.endpoint(upUrl);
    await post(traces.watch(plainAgents), downUrl);
    expect(reach.reason()).toBeUndefined();
    await post(metrics.watch(plainAgents), upUrl);
    expect(reach.reason()).toBeUndefined();
  });

  it('says why a connection failed in words', () => {
    expect(describeConnectError({ code: 'ENOTFOUND' })).toBe('host not found');
    expect(describeConnectError({ code: 'EHOSTUNREACH' })).toBe('host unreachable');
    expect(describeConnectError({ code: 'EWHATEVER' })).toBe('EWHATEVER');
  });
});
