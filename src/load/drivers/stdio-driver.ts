/**
 * stdio driver: a pool of server processes; lane k uses process k mod pool, and requests from
 * all its lanes are multiplexed over that process by JSON-RPC id.
 * - Legacy era: each process is one session, initialized once at start.
 * - Modern era: stateless requests with `_meta`.
 * The era is detected on the first process (`server/discover`) unless the scenario fixes it.
 * Stray violations (stdout pollution, responses to unknown ids, server requests in the modern
 * era) are counted through `samples`.
 */
import { McptapError } from '../../errors.js';
import { detectEra } from '../../client/detect-era.js';
import { StdioChannel } from '../../client/mcp-channel.js';
import { McpSession, numericIds } from '../../client/mcp-session.js';
import type { ClientInfo } from '../../client/mcp-request.js';
import { McpStdioClient } from '../../client/stdio-client.js';
import { TransportError } from '../../client/transport-error.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { EraChoice } from '../scenario/scenario.js';
import type { Driver, SampleRecorder, Lane } from './driver.js';
import { RequestShapes } from './request-shapes.js';
import { holdStream, listNames, openLegacySession, sendCall, type SendBuilt } from './send-call.js';
import type { NameList } from '../run/preflight.js';
import type { ClientSide } from '../run/client-side.js';
import { terminalSafe } from '../../report/format.js';

export interface StdioDriverOptions {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  pool: number;
  era: EraChoice;
  protocolVersion?: string;
  timeoutMs: number;
  clientInfo?: ClientInfo;
  /** The capabilities sessions declare and the answers to the server's requests (client-side.ts). */
  client?: ClientSide;
  clock: Clock;
  logger: Logger;
  samples: SampleRecorder;
  /** The run's stop: while the processes are still being checked, it kills them (they may never answer). */
  signal?: AbortSignal;
}

interface Proc {
  client: McpStdioClient;
  session: McpSession;
  /** Iteration calls: the pre-built text straight to the client. */
  send?: SendBuilt;
}

/** How long a newly started server process may take to answer its first request (ms). */
const STARTUP_TIMEOUT_MS = 30_000;

export class StdioDriver implements Driver {
  readonly transport = 'stdio' as const;
  private readonly shapes = new RequestShapes(undefined);

  private constructor(
    private readonly opts: StdioDriverOptions,
    private readonly procs: Proc[],
    readonly era: 'legacy' | 'modern',
  ) {}

  get target(): string {
    return [this.opts.command, ...this.opts.args].join(' ');
  }

  static async start(opts: StdioDriverOptions): Promise<StdioDriver> {
    const clients: McpStdioClient[] = [];
    let era: 'legacy' | 'modern' = opts.era === 'modern' ? 'modern' : 'legacy';
    let version = opts.protocolVersion;
    const life: Life = { running: false };
    const stop = () => {
      clients.forEach((c) => c.kill('SIGTERM'));
    };
    opts.signal?.addEventListener('abort', stop, { once: true });
    try {
      for (let i = 0; i < opts.pool; i++) clients.push(await spawnOne(opts, () => era, life));
      // A process just started answers its first request after its own start-up: the scenario's
      // per-request timeout (200 ms, say) is no measure of that.
      const startupMs = Math.max(opts.timeoutMs ?? 0, STARTUP_TIMEOUT_MS);
      if (opts.era === 'detect') {
        const p = await detectEra(new StdioChannel(clients[0]!), { clientInfo: opts.clientInfo, timeoutMs: startupMs });
        era = p.era;
        version = p.protocolVersion;
      }
      const procs = clients.map((client) => ({
        client,
        session: new McpSession(new StdioChannel(client), {
          era,
          protocolVersion: version,
          clientInfo: opts.clientInfo,
          capabilities: opts.client?.capabilities,
          timeoutMs: opts.timeoutMs,
          ids: numericIds(1000),
        }),
      }));
      // initialize is the first request of every process but the one detection talked to.
      if (era === 'legacy') await initializeAll(procs, opts, startupMs);
      // Declared, not detected: one discover per process still says whether it runs at all (any
      // answer will do), once, instead of a child_exit for every request of the run.
      else if (opts.era === 'modern') await Promise.all(procs.map((p) => p.session.request('server/discover', {}, { timeoutMs: startupMs })));
      life.running = true;
      return new StdioDriver(opts, procs, era);
    } catch (err) {
      await Promise.allSettled(clients.map((c) => c.close(200)));
      if (err instanceof TransportError) {
        throw new McptapError('MCPTAP_LOAD_TARGET_UNAVAILABLE', `cannot use the stdio target "${opts.command}": ${err.message}`);
      }
      throw err;
    } finally {
      opts.signal?.removeEventListener('abort', stop);
    }
  }

  newLane(id: number): Lane {
    const proc = this.procs[id % this.procs.length]!;
    const { clock, timeoutMs } = this.opts;
    const requestOpts = { timeoutMs };
    const send = (proc.send ??= (b, reqId) => proc.client.requestText(reqId, b.text, b.progressToken, requestOpts));
    return {
      id,
      call: (c, t) => sendCall(proc.session, this.shapes, send, c, t, clock),
      // Lanes share their process: legacy, each listen sees the process's one stdout stream.
      listen: (c, t, hold) => holdStream(proc.session, c, t, clock, hold),
      close: async () => {},
    };
  }

  listNames(lists: readonly NameList[]): Promise<Partial<Record<NameList, string[]>>> {
    return listNames(this.procs[0]!.session, lists);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.procs.map((p) => p.client.close()));
  }
}

/** Exits are said once the driver runs: during its start they are the start's error. */
interface Life {
  running: boolean;
}

async function spawnOne(opts: StdioDriverOptions, era: () => 'legacy' | 'modern', life: Life): Promise<McpStdioClient> {
  return McpStdioClient.spawn({
    command: opts.command,
    args: opts.args,
    env: opts.env,
    cwd: opts.cwd,
    timeoutMs: opts.timeoutMs,
    clock: opts.clock,
    onStderr: (t) => opts.logger.debug(`target stderr: ${t.trimEnd()}`),
    // Mid-run, the report shows only transport errors (child_exit): the reason is said here, once per process.
    onExit: (reason, last, asked) => {
      if (asked || !life.running) return;
      opts.logger.warn(
        `the stdio target exited mid-run: ${reason}${last ? `; its stderr ended with: ${terminalSafe(last)}` : ''}; its calls fail from now on (transport child_exit)`,
      );
    },
    // Ctrl-C stops the run gracefully: the server must outlive it until the requests in flight end.
    ownProcessGroup: true,
    ...(opts.client ? { onServerRequest: opts.client.answer } : {}),
    onViolation: (kind) => {
      // Server-to-client requests are legal in the legacy era (sampling, roots, ping).
      if (kind !== 'server_request' || era() === 'modern') opts.samples.violation(kind);
    },
  });
}

async function initializeAll(procs: Proc[], opts: StdioDriverOptions, startupMs: number): Promise<void> {
  for (const p of procs) {
    const ok = await openLegacySession(p.session, opts.clock.nowUs(), opts.clock, (s) => opts.samples.record(s), startupMs);
    if (!ok) {
      const why = p.client.exitedReason ?? 'the server did not accept initialize';
      throw new McptapError('MCPTAP_LOAD_TARGET_REFUSED', `the stdio target "${opts.command}" could not be initialized: ${why}`);
    }
  }
}
