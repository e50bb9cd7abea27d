/**
 * One time limit for closing the telemetry (the sinks' final flushes, then the providers), counted from the first close of any part: with an OTLP
 * endpoint down each export retries for seconds, and a tap asked to stop must stop (docs/performance.md, "Figures moved from source comments").
 * Pending exports are abandoned then. It ends early when no OTLP endpoint was ever reached; one reached once keeps it all. Whether an endpoint was
 * reached is seen on the exporters' own sockets ({@link OtlpReachability}): the SDK's exporters retry a refused connection for seconds and report
 * only the batch's result, so only there is it known early that an endpoint is down.
 */
import type { Agent } from 'node:http';
import type { Duplex } from 'node:stream';
import type { OTLPExporterNodeConfigBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions } from '@opentelemetry/otlp-exporter-base/node-http';
import type { OtlpTarget } from './telemetry-config.js';

/** How a wait under the deadline ended: the work finished, the deadline came, or it gave up early. */
export type CloseOutcome = 'done' | 'expired' | 'unreachable';

/** Says when waiting is pointless (a reason), and when to ask again. */
export interface GiveUpSignal {
  reason(): string | undefined;
  onChange(listener: () => void): () => void;
}

/** Calls `fire` after `ms`; the default timer does not keep the process alive. */
export type StartTimer = (ms: number, fire: () => void) => void;

const unrefTimer: StartTimer = (ms, fire) => void setTimeout(fire, ms).unref();

export class CloseDeadline {
  private ended: Promise<'expired' | 'unreachable'> | undefined;
  /** Why it gave up early, once it has. */
  gaveUpBecause: string | undefined;

  constructor(
    readonly ms: number,
    private readonly giveUp?: GiveUpSignal,
    private readonly startTimer: StartTimer = unrefTimer,
  ) {}

  /** Waits for `work` until the deadline (whose clock starts at the first call) or until waiting is pointless. */
  within(work: Promise<unknown>): Promise<CloseOutcome> {
    this.ended ??= new Promise((resolve) => {
      let off = () => {};
      const check = () => {
        const why = this.giveUp?.reason();
        if (why === undefined) return;
        this.gaveUpBecause ??= why;
        off();
        resolve('unreachable');
      };
      this.startTimer(this.ms, () => {
        off();
        resolve('expired');
      });
      if (this.giveUp) off = this.giveUp.onChange(check);
      check();
    });
    return Promise.race([
      work.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      this.ended,
    ]);
  }
}

/** What the SDK's node exporters take as `httpAgentOptions` to make their agent. */
export type AgentFactory = (protocol: string) => Agent | Promise<Agent>;

const CONNECT_ERRORS = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ENOTFOUND', 'host not found'],
  ['EAI_AGAIN', 'host not found'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
  ['ETIMEDOUT', 'connect timed out'],
]);

/** Why a connection attempt failed, in words (`connection refused`). */
export function describeConnectError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? (CONNECT_ERRORS.get(code) ?? code) : err instanceof Error ? err.message : String(err);
}

/** One endpoint (an origin: scheme, host and port), shared by the exporters that send to it. Unreachable: a connection failed and none ever succeeded. */
export class EndpointReachability {
  private connected = false;
  private failure: string | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(readonly origin: string) {}

  /** Why it is unreachable (`connection refused`); undefined once reached, or before any attempt failed. */
  get unreachable(): string | undefined {
    return this.connected ? undefined : this.failure;
  }

  connectFailed(err: unknown): void {
    if (this.connected) return;
    this.failure = describeConnectError(err);
    for (const l of [...this.listeners]) l();
  }

  /** Called after each failed connection to a never-reached endpoint; returns the unsubscribe. */
  onFailure(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Wraps an agent factory so that every socket its agents open reports here whether it connected. */
  watch(factory: AgentFactory): AgentFactory {
    return async (protocol) => {
      const agent = await factory(protocol);
      const create = agent.createConnection.bind(agent);
      agent.createConnection = (options, callback) => {
        const socket = create(options, callback);
        if (socket) this.watchSocket(socket);
        return socket;
      };
      return agent;
    };
  }

  private watchSocket(socket: Duplex): void {
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      this.connected = true;
    });
    // The request has its own 'error' listener; this one only reads errors before the connect.
    socket.once('error', (err) => connected || this.connectFailed(err));
  }
}

/** The OTLP endpoints in use, each once; the close gives up early when every one is unreachable. */
export class OtlpReachability {
  private readonly endpoints = new Map<string, EndpointReachability>();

  /** An OTLP exporter's options for `target`, its agent factory the SDK's own (env TLS files, keep-alive), watched. */
  exporterOptions(target: OtlpTarget, signal: 'TRACES' | 'METRICS'): OTLPExporterNodeConfigBase {
    const config = { url: target.url, headers: target.headers, timeoutMillis: target.timeoutMillis };
    const base = convertLegacyHttpOptions(config, signal, signal === 'TRACES' ? 'v1/traces' : 'v1/metrics', {}).agentFactory as AgentFactory;
    return { ...config, httpAgentOptions: this.endpoint(target.url).watch(base) };
  }

  endpoint(url: string): EndpointReachability {
    const origin = URL.canParse(url) ? new URL(url).origin : url;
    let e = this.endpoints.get(origin);
    if (!e) this.endpoints.set(origin, (e = new EndpointReachability(origin)));
    return e;
  }

  /** `OTLP endpoint http://… unreachable (connection refused)` when every endpoint is; else undefined. */
  reason(): string | undefined {
    if (this.endpoints.size === 0) return undefined;
    const parts: string[] = [];
    for (const e of this.endpoints.values()) {
      const why = e.unreachable;
      if (why === undefined) return undefined;
      parts.push(`${e.origin} unreachable (${why})`);
    }
    return `OTLP endpoint${parts.length > 1 ? 's' : ''} ${parts.join(', ')}`;
  }

  onChange(listener: () => void): () => void {
    const offs = [...this.endpoints.values()].map((e) => e.onFailure(listener));
    return () => offs.forEach((off) => off());
  }
}
