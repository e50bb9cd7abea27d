/**
 * Streamable HTTP driver over one undici keep-alive pool shared by all lanes.
 * - Legacy era: each lane owns a session (`initialize` on first use, `Mcp-Session-Id` reused);
 *   with `churn` N the session is ended (DELETE) after N iterations and a fresh one is opened; a
 *   404 (session expired) makes the lane open a fresh session for its next call.
 * - Modern era: lanes share one stateless session; every request carries `_meta` and the
 *   `Mcp-Method`/`Mcp-Name` headers.
 * `connect()` probes the target first (era detection, or a handshake), so an unreachable target
 * fails before any phase starts, with a clear message.
 */
import { McptapError } from '../../errors.js';
import { detectEra } from '../../client/detect-era.js';
import { HttpChannel } from '../../client/mcp-channel.js';
import { McpSession, numericIds } from '../../client/mcp-session.js';
import type { ClientInfo } from '../../client/mcp-request.js';
import { TransportError } from '../../client/transport-error.js';
import type { Clock } from '../../util/clock.js';
import type { EraChoice } from '../scenario/scenario.js';
import type { CallRecord, Driver, SampleRecorder, Lane, PreparedCall, StreamHold } from './driver.js';
import { DeadlineList } from '../../util/deadlines.js';
import { postText } from './http-exchange.js';
import { RequestShapes } from './request-shapes.js';
import { holdStream, listNames, openLegacySession, sendCall, type SendBuilt } from './send-call.js';
import type { NameList } from '../run/preflight.js';
import type { ClientSide } from '../run/client-side.js';
import { holdServerStream, type HeldServerStream } from '../../client/server-stream.js';

export interface HttpDriverOptions {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  era: EraChoice;
  protocolVersion?: string;
  timeoutMs: number;
  /** Legacy: iterations per session before it is replaced (0 = never). */
  churn: number;
  clientInfo?: ClientInfo;
  /** The capabilities sessions declare and the answers to the server's requests (client-side.ts). */
  client?: ClientSide;
  clock: Clock;
  samples: SampleRecorder;
}

export class HttpDriver implements Driver {
  readonly transport = 'http' as const;
  private readonly modernSession: McpSession | undefined;
  private readonly deadlines: DeadlineList;
  /** Iteration calls go out through the driver's own dispatch handler (http-exchange.ts). */
  private readonly fast: FastPath;

  private constructor(
    private readonly opts: HttpDriverOptions,
    private readonly channel: HttpChannel,
    readonly era: 'legacy' | 'modern',
    protocolVersion: string | undefined,
  ) {
    const ep = channel.client.endpoint;
    this.deadlines = new DeadlineList(opts.clock);
    const target = { dispatcher: ep.dispatcher, origin: ep.origin, path: ep.path, timeoutMs: opts.timeoutMs, deadlines: this.deadlines, clock: opts.clock };
    this.fast = { shapes: new RequestShapes(ep.headers), send: (b, id, sentUs) => postText(target, b.text, b.headers!, id, sentUs) };
    this.modernSession =
      era === 'modern'
        ? new McpSession(channel, {
            era,
            protocolVersion,
            clientInfo: opts.clientInfo,
            capabilities: opts.client?.capabilities,
            timeoutMs: opts.timeoutMs,
            ids: numericIds(),
          })
        : undefined;
  }

  get target(): string {
    return this.opts.url;
  }

  static async connect(opts: HttpDriverOptions): Promise<HttpDriver> {
    const headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const channel = new HttpChannel({ url: opts.url, connections: opts.connections, timeoutMs: opts.timeoutMs, headers, clock: opts.clock });
    try {
      const { era, version } = await probe(channel, opts);
      return new HttpDriver(opts, channel, era, version);
    } catch (err) {
      await channel.close();
      throw err;
    }
  }

  newLane(id: number): Lane {
    if (this.modernSession) {
      const session = this.modernSession;
      const clock = this.opts.clock;
      return {
        id,
        call: (c, t) => sendCall(session, this.fast.shapes, this.fast.send, c, t, clock),
        listen: (c, t, hold) => holdStream(session, c, t, clock, hold),
        close: async () => {},
      };
    }
    // A lane of its own: the legacy headers carry the lane's session id.
    return new LegacyHttpLane(id, this.channel, this.opts, { shapes: new RequestShapes(this.channel.client.endpoint.headers), send: this.fast.send });
  }

  async listNames(lists: readonly NameList[]): Promise<Partial<Record<NameList, string[]>>> {
    if (this.modernSession) return listNames(this.modernSession, lists);
    const s = new McpSession(this.channel, {
      era: 'legacy',
      clientInfo: this.opts.clientInfo,
      capabilities: this.opts.client?.capabilities,
      timeoutMs: this.opts.timeoutMs,
    });
    await s.initialize();
    try {
      return s.isInitialized ? await listNames(s, lists) : {};
    } finally {
      await s.close();
    }
  }

  close(): Promise<void> {
    this.deadlines.close();
    return this.channel.close();
  }
}

interface FastPath {
  shapes: RequestShapes;
  send: SendBuilt;
}

async function probe(channel: HttpChannel, opts: HttpDriverOptions): Promise<{ era: 'legacy' | 'modern'; version?: string }> {
  try {
    let detected: string | undefined;
    if (opts.era === 'detect') {
      const p = await detectEra(channel, { clientInfo: opts.clientInfo, protocolVersion: opts.protocolVersion, timeoutMs: opts.timeoutMs });
      // A legacy answer is checked below with a handshake, as a declared legacy era is: a wrong
      // path (404 to everything) must not pass for a legacy server and fail every iteration.
      if (p.era === 'modern') return { era: p.era, version: p.protocolVersion };
      detected = p.protocolVersion;
    }
    if (opts.era === 'modern') {
      // The era is declared, so nothing is detected; but a target that cannot be reached is said
      // here, once, and not as a transport error of every request of the run (which exited 0).
      // Any answer at all, even an error, means it is reachable.
      await new McpSession(channel, {
        era: 'modern',
        clientInfo: opts.clientInfo,
        capabilities: opts.client?.capabilities,
        protocolVersion: opts.protocolVersion,
        timeoutMs: opts.timeoutMs,
      }).request('server/discover', {});
      return { era: 'modern', version: opts.protocolVersion };
    }
    const s = new McpSession(channel, { era: 'legacy', clientInfo: opts.clientInfo, capabilities: opts.client?.capabilities, timeoutMs: opts.timeoutMs });
    const r = await s.initialize();
    if (!s.isInitialized) {
      const why = r.response?.error ? `JSON-RPC error ${r.response.error.code} ${r.response.error.message}` : `HTTP ${r.httpStatus}`;
      // A 404 is most often the wrong path: MCP servers serve one endpoint, usually /mcp.
      const hint = r.httpStatus === 404 ? `; is ${new URL(opts.url).pathname} the server's MCP endpoint? (usually /mcp)` : '';
      throw new McptapError('MCPTAP_LOAD_TARGET_REFUSED', `${opts.url} refused the initialize handshake (${why})${hint}`);
    }
    await s.close();
    return { era: 'legacy', ...(detected !== undefined ? { version: detected } : {}) };
  } catch (err) {
    if (err instanceof TransportError) {
      throw new McptapError(
        'MCPTAP_LOAD_TARGET_UNREACHABLE',
        `cannot reach the target ${opts.url}: ${err.errorClass.replace('_', ' ')}. Is the server running and is the URL right?`,
      );
    }
    throw err;
  }
}

class LegacyHttpLane implements Lane {
  private session: McpSession | undefined;
  /** A client with capabilities holds its session's GET stream: the server asks it there (roots/list). */
  private stream: HeldServerStream | undefined;
  private iterations = 0;

  constructor(
    readonly id: number,
    private readonly channel: HttpChannel,
    private readonly opts: HttpDriverOptions,
    private readonly fast: FastPath,
  ) {}

  private async ready(intendedUs: number): Promise<McpSession | undefined> {
    if (!this.session) {
      const s = new McpSession(this.channel, {
        era: 'legacy',
        clientInfo: this.opts.clientInfo,
        capabilities: this.opts.client?.capabilities,
        timeoutMs: this.opts.timeoutMs,
      });
      if (!(await openLegacySession(s, intendedUs, this.opts.clock, (x) => this.opts.samples.record(x)))) return undefined;
      this.session = s;
      const client = this.opts.client;
      if (client) {
        this.stream = holdServerStream(s, { answer: (req) => client.answer(req), openTimeoutMs: this.opts.timeoutMs });
        await this.stream.opened;
      }
    }
    return this.session;
  }

  async call(c: PreparedCall, intendedUs: number): Promise<CallRecord | undefined> {
    const session = this.session ?? (await this.ready(intendedUs));
    if (!session) return undefined;
    const rec = await sendCall(session, this.fast.shapes, this.fast.send, c, intendedUs, this.opts.clock);
    // 404 on a session request means the server dropped the session: start a new one next time.
    if (rec.sample.httpStatus === 404) {
      this.session = undefined;
      void this.endStream();
    }
    return rec;
  }

  /** The session's GET stream (one per session: the lane's own). */
  async listen(c: PreparedCall, intendedUs: number, hold: StreamHold): Promise<{ held: boolean; rec?: CallRecord }> {
    const session = await this.ready(intendedUs);
    if (!session) return { held: false };
    return holdStream(session, c, intendedUs, this.opts.clock, hold);
  }

  async endIteration(): Promise<void> {
    if (this.opts.churn <= 0 || !this.session) return;
    if (++this.iterations < this.opts.churn) return;
    this.iterations = 0;
    const s = this.session;
    this.session = undefined;
    await this.endStream();
    await s.close();
  }

  async close(): Promise<void> {
    await this.endStream();
    await this.session?.close();
    this.session = undefined;
  }

  private endStream(): Promise<void> {
    const s = this.stream;
    this.stream = undefined;
    return s ? s.close() : Promise.resolve();
  }
}
