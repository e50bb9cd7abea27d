import { describe, expect, it } from 'vitest';
import { ListenerGuard, hostnameOf } from '../../src/tap/listener-guard.js';

describe('ListenerGuard (DNS rebinding protection)', () => {
  it('on loopback: accepts loopback names on any port, refuses other hosts', () => {
    const g = new ListenerGuard({ listenHost: '127.0.0.1' });
    for (const h of ['127.0.0.1:7077', 'localhost:1', 'LOCALHOST', '[::1]:7077']) expect(g.check(h, undefined).ok).toBe(true);
    for (const h of ['evil.example', 'evil.example:7077', '127.0.0.1.nip.io:7077']) expect(g.check(h, undefined).ok).toBe(false);
    expect(g.check(undefined, undefined).ok).toBe(false);
  });

  it('checks Origin only when present; hostname or exact origin entries', () => {
    const g = new ListenerGuard({ listenHost: '127.0.0.1', allowedOrigins: ['https://app.example:8443', 'tools.example'] });
    expect(g.check('localhost', undefined).ok).toBe(true);
    expect(g.check('localhost', 'http://localhost:5173').ok).toBe(true);
    expect(g.check('localhost', 'https://app.example:8443').ok).toBe(true);
    expect(g.check('localhost', 'https://app.example').ok).toBe(false);
    expect(g.check('localhost', 'http://tools.example:1234').ok).toBe(true);
    expect(g.check('localhost', 'http://evil.example').ok).toBe(false);
    expect(g.check('localhost', 'null').ok).toBe(false);
  });

  it('allowed hosts: a bare name allows any port, host:port only that port', () => {
    const g = new ListenerGuard({ listenHost: '127.0.0.1', allowedHosts: ['mcp.test', 'gw.test:8080'] });
    expect(g.check('mcp.test:1', undefined).ok).toBe(true);
    expect(g.check('gw.test:8080', undefined).ok).toBe(true);
    expect(g.check('gw.test:9090', undefined).ok).toBe(false);
  });

  it('a wildcard bind without allowed hosts switches the Host check off (and says so)', () => {
    const g = new ListenerGuard({ listenHost: '0.0.0.0' });
    expect(g.hostCheckOff).toBe(true);
    expect(g.check('anything.example', undefined).ok).toBe(true);
    expect(g.check('anything.example', 'http://evil.example').ok).toBe(false);
    expect(new ListenerGuard({ listenHost: '0.0.0.0', allowedHosts: ['box.lan'] }).check('other', undefined).ok).toBe(false);
  });

  it('the same verdicts whatever came before (it remembers the last Host that passed)', () => {
    const g = new ListenerGuard({ listenHost: '127.0.0.1' });
    for (let i = 0; i < 3; i++) {
      expect(g.check('127.0.0.1:7077', undefined).ok).toBe(true);
      expect(g.check('127.0.0.1:7077', 'http://evil.example').ok).toBe(false);
      expect(g.check('evil.example', undefined).ok).toBe(false);
      expect(g.check(undefined, undefined).ok).toBe(false);
      expect(g.check('localhost:7077', 'http://localhost:3000').ok).toBe(true);
    }
  });

  it('parses Host values', () => {
    expect(hostnameOf('Example.COM:80')).toBe('example.com');
    expect(hostnameOf('[::1]:7077')).toBe('[::1]');
    expect(hostnameOf('[::1]')).toBe('[::1]');
  });
});
