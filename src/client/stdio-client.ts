/**
 * A raw stdio MCP client: one child process, requests multiplexed over its stdin/stdout by id.
 *
 * Invariants:
 * - Every request resolves with a {@link CallResult} once its response arrives, or rejects with a
 *   {@link TransportError} (`timeout`, `aborted`, `child_exit`); nothing else throws.
 * - Pending requests are keyed by {@link idKey}, so `1` and `"1"` are different requests.
 * - Non-JSON stdout lines and responses nobody waits for are reported through `onViolation`,
 *   never thrown. Server-to-client requests get an answer (`ping` -> `{}`, others -> -32601) so
 *   the server is never left waiting.
 * - A request's timeout is a deadline of its own, as over HTTP: a 200 ms timeout fires at 200 ms,
 *   not at the next tick of a shared sweeper (one timer serves them all: util/deadlines.ts).
 * - Lines written in one turn of the event loop go to the pipe in one write (stdin is corked until
 *   the next tick): a write per request cost more than the rest of the request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { idKey, type JsonRpcId, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../model/jsonrpc.js';
import type { Frame } from '../model/frame.js';
import { NdjsonDecoder } from '../parse/ndjson-decoder.js';
import { counter } from '../parse/frame-parser.js';
import { progressTokenOf } from '../protocol/mcp.js';
import { systemClock, type Clock } from '../util/clock.js';
import { DeadlineList, type Deadline } from '../util/deadlines.js';
import type { CallResult, ViolationKind } from './call-result.js';
import { TransportError } from './transport-error.js';
import { lastErrorLine } from '../util/last-error-line.js';

/** How much of a server's stderr is kept for the reason it gives when it exits. */
const STDERR_TAIL_CHARS = 2000;
/** How long close() waits for the pipes after the exit: a grandchild may hold them open. */
const PIPES_CLOSE_MS = 200;

export interface StdioClientOptions {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Default per-request timeout, ms (default 30 000). */
  timeoutMs?: number;
  clock?: Clock;
  onStderr?: (text: string) => void;
  /**
   * The process ended and its pipes closed: why, its last stderr line (see lastErrorLine), and
   * whether this client had asked it to end ({@link McpStdioClient.close} or kill) before it did.
   */
  onExit?: (reason: string, lastStderrLine: string | undefined, asked: boolean) => void;
  onViolation?: (kind: ViolationKind, detail: string) => void;
  /** Server-to-client requests; return the response to send (default: ping -> {}, else -32601). */
  onServerRequest?: (req: JsonRpcRequest) => JsonRpcResponse;
  /**
   * Start the server in a process group of its own: a Ctrl-C at the terminal then reaches only the
   * caller, which closes the server itself ({@link McpStdioClient.close}) once its requests in flight
   * are done. The server still ends with its stdin if the caller dies. Default false.
   */
  ownProcessGroup?: boolean;
}

export interface StdioRequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  onMessage?: (message: JsonRpcMessage, timeUs: number) => void;
  /** {@link McpStdioClient.watch}: the watcher is registered (notifications from now on reach it). */
  onOpen?: (timeUs: number) => void;
}

class Pending implements Deadline {
  deadlineUs = 0;
  prevDeadline: Deadline | undefined = undefined;
  nextDeadline: Deadline | undefined = undefined;
  armed = false;
  sentUs = 0;
  readonly messages: JsonRpcMessage[] = [];
  readonly eventTimes: number[] = [];
  progressToken: JsonRpcId | undefined = undefined;
  onMessage: ((m: JsonRpcMessage, t: number) => void) | undefined = undefined;

  constructor(
    readonly id: JsonRpcId,
    readonly expire: () => void,
    readonly resolve: (r: CallResult) => void,
    readonly reject: (e: TransportError) => void,
  ) {}
}

const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';

/** Ids given up on that are remembered (their late answers are expected, not violations). */
const MAX_GAVE_UP = 10_000;

export class McpStdioClient {
  private readonly pending = new Map<string, Pending>();
  private sentCount = 0;
  private readonly byToken = new Map<string, Pending>();
  /** Ids given up on (timed out, aborted), oldest first: their late answers are no protocol violation. */
  private readonly gaveUp = new Set<string>();
  /** Pending ids the caller already sent `notifications/cancelled` for (not sent twice on abort). */
  private readonly cancelSent = new Set<string>();
  private readonly decoder: NdjsonDecoder;
  private readonly clock: Clock;
  private readonly deadlines: DeadlineList;
  /** {@link watch}ers: notifications that belong to no request in flight go to each of them. */
  private readonly watchers = new Set<(m: JsonRpcNotification, t: number) => void>();
  private corked = false;
  private exitReason: string | undefined;
  /** The end of what the process wrote on stderr: why it exited, when it says. */
  private stderrTail = '';
  private readonly exited: Promise<void>;
  private readonly pipesClosed: Promise<void>;
  /** close() or kill() was called; read at the exit, so a close after it does not count. */
  private endAsked = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly opts: StdioClientOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.deadlines = new DeadlineList(this.clock);
    this.decoder = new NdjsonDecoder({ connectionId: 'client', direction: 's2c', seq: counter() });
    child.stdout!.on('data', (b: Buffer) => this.onFrames(this.decoder.push(b, this.clock.nowUs())));
    child.stderr!.on('data', (b: Buffer) => {
      const text = b.toString('utf8');
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
      opts.onStderr?.(text);
    });
    child.stdin!.on('error', () => undefined); // EPIPE after exit is reported through 'exit'
    this.pipesClosed = new Promise((resolve) => child.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        const asked = this.endAsked;
        if (opts.onExit) child.once('close', () => opts.onExit!(this.exitReason ?? 'server process exited', this.lastStderrLine, asked));
        this.failAll(`server process exited (code ${code ?? 'none'}${signal ? `, signal ${signal}` : ''})`);
        resolve();
      });
    });
  }

  /** Spawn the server. Rejects with a TransportError when the command cannot be started. */
  static async spawn(opts: StdioClientOptions): Promise<McpStdioClient> {
    const child = spawn(opts.command, opts.args ?? [], {
      cwd: opts.cwd,
      env: { ...process.env, ...(opts.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(opts.ownProcessGroup ? { detached: true } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new TransportError('child_exit', `cannot start ${opts.command}: ${(err as Error).message}`, { cause: err })));
    });
    return new McpStdioClient(child, opts);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The line of its stderr that says why it ended (see lastErrorLine), if it wrote one. */
  get lastStderrLine(): string | undefined {
    return lastErrorLine(this.stderrTail);
  }

  /** Why the process is gone, or undefined while it runs. */
  get exitedReason(): string | undefined {
    return this.exitReason;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Requests written so far: a change tells a watcher that something else was asked meanwhile. */
  get requestsSent(): number {
    return this.sentCount;
  }

  request(req: JsonRpcRequest, opts: StdioRequestOptions = {}): Promise<CallResult> {
    return this.requestText(req.id, JSON.stringify(req), progressTokenOf(req), opts);
  }

  /**
   * {@link request} for a request already serialized: `text` is its JSON (one line, no newline),
   * `progressToken` the `_meta.progressToken` it carries. The load driver builds these once per step.
   */
  requestText(id: JsonRpcId, text: string, progressToken: JsonRpcId | undefined, opts: StdioRequestOptions = {}): Promise<CallResult> {
    if (this.exitReason) return Promise.reject(new TransportError('child_exit', this.exitReason));
    // Aborted before it was sent: never sent (an abort listener added now would never fire).
    if (opts.signal?.aborted) return Promise.reject(new TransportError('aborted', 'request aborted'));
    const key = idKey(id);
    if (this.pending.has(key)) return Promise.reject(new TransportError('other', `id ${JSON.stringify(id)} is already in flight`));
    return new Promise<CallResult>((resolve, reject) => {
      const ms = opts.timeoutMs ?? this.opts.timeoutMs ?? 30_000;
      const p = new Pending(id, () => this.settle(key, new TransportError('timeout', `no response within ${ms} ms`)), resolve, reject);
      p.sentUs = this.clock.nowUs();
      if (opts.onMessage) p.onMessage = opts.onMessage;
      if (progressToken !== undefined) {
        p.progressToken = progressToken;
        this.byToken.set(idKey(progressToken), p);
      }
      this.pending.set(key, p);
      if (opts.signal) opts.signal.addEventListener('abort', () => this.settle(key, new TransportError('aborted', 'request aborted')), { once: true });
      this.deadlines.add(p, ms);
      this.sentCount++;
      this.write(text + '\n');
    });
  }

  /**
   * The process's own notification stream, until `signal` aborts (rejects `aborted`), `timeoutMs`
   * passes or the process exits: every notification that belongs to no request in flight (legacy
   * list changes and resource updates arrive on stdout unsolicited) goes to `onMessage`. Never
   * resolves: a stdout stream has no end but the process's.
   */
  watch(opts: StdioRequestOptions = {}): Promise<CallResult> {
    if (this.exitReason) return Promise.reject(new TransportError('child_exit', this.exitReason));
    if (opts.signal?.aborted) return Promise.reject(new TransportError('aborted', 'stream closed'));
    return new Promise<CallResult>((_resolve, reject) => {
      const ms = opts.timeoutMs ?? this.opts.timeoutMs ?? 30_000;
      const fn = (m: JsonRpcNotification, t: number): void => opts.onMessage?.(m, t);
      let done = false;
      const end = (err: TransportError): void => {
        if (done) return;
        done = true;
        this.watchers.delete(fn);
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        reject(err);
      };
      const onAbort = (): void => end(new TransportError('aborted', 'stream closed'));
      const timer = setTimeout(() => end(new TransportError('timeout', `stream held past ${ms} ms`)), ms);
      this.watchers.add(fn);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      void this.exited.then(() => end(new TransportError('child_exit', this.exitReason ?? 'server process exited')));
      if (opts.signal?.aborted) onAbort();
      else opts.onOpen?.(this.clock.nowUs());
    });
  }

  /** One line to stdin; lines of the same turn of the event loop leave in one write. */
  private write(line: string): void {
    const stdin = this.child.stdin!;
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    stdin.write(line);
  }

  /** Send a notification (or any message) as one line. */
  send(msg: JsonRpcNotification | JsonRpcResponse | JsonRpcMessage): void {
    if (this.exitReason) return;
    if ('method' in msg && msg.method === 'notifications/cancelled') {
      const id = (msg.params as { requestId?: unknown } | undefined)?.requestId;
      if ((typeof id === 'string' || typeof id === 'number') && this.pending.has(idKey(id))) this.cancelSent.add(idKey(id));
    }
    this.write(JSON.stringify(msg) + '\n');
  }

  /** Signals the process at once (a run stopped while it had not answered yet); its exit fails what is pending. */
  kill(signal: NodeJS.Signals): void {
    this.endAsked = true;
    if (!this.exitReason) this.child.kill(signal);
  }

  /**
   * Close stdin, wait for the exit, then SIGTERM / SIGKILL after `graceMs`. Resolves once its pipes
   * are closed too (onExit has been called), or 200 ms after the exit if a grandchild holds them.
   */
  async close(graceMs = 2000): Promise<void> {
    this.endAsked = true;
    if (!this.exitReason) {
      this.child.stdin!.end();
      const t1 = setTimeout(() => this.child.kill('SIGTERM'), graceMs);
      const t2 = setTimeout(() => this.child.kill('SIGKILL'), graceMs * 2);
      await this.exited;
      clearTimeout(t1);
      clearTimeout(t2);
    }
    let t: NodeJS.Timeout | undefined;
    await Promise.race([this.pipesClosed, new Promise((r) => (t = setTimeout(r, PIPES_CLOSE_MS)))]);
    clearTimeout(t);
  }

  private onFrames(frames: Frame[]): void {
    for (const f of frames) {
      if (f.kind === 'invalid') this.opts.onViolation?.('stdout_pollution', f.detail);
      else if (f.kind === 'message') this.onMessage(f.message, f.timeUs);
    }
  }

  private onMessage(m: JsonRpcMessage, t: number): void {
    if ('method' in m && 'id' in m) return this.answerServerRequest(m as JsonRpcRequest);
    if ('method' in m) return this.onNotification(m as JsonRpcNotification, t);
    const res = m as JsonRpcResponse;
    const key = res.id === null ? undefined : idKey(res.id);
    const p = key ? this.pending.get(key) : undefined;
    if (!p || !key) {
      // A late answer to a request this client gave up on is its own doing, not the server's fault.
      if (key && this.gaveUp.delete(key)) return;
      this.opts.onViolation?.('orphan_response', `response to unknown id ${JSON.stringify(res.id)}`);
      return;
    }
    p.onMessage?.(m, t);
    p.eventTimes.push(t);
    this.forget(key, p);
    const timing = { sentUs: p.sentUs, responseUs: t, endUs: t, firstEventUs: p.eventTimes[0], eventTimesUs: p.eventTimes };
    p.resolve({ response: res, messages: p.messages, violations: [], timing });
  }

  private onNotification(n: JsonRpcNotification, t: number): void {
    const token = (n.params as { progressToken?: unknown } | undefined)?.progressToken;
    const p = typeof token === 'string' || typeof token === 'number' ? this.byToken.get(idKey(token)) : undefined;
    if (!p) return this.onStray(n, t);
    p.messages.push(n);
    p.eventTimes.push(t);
    p.onMessage?.(n, t);
  }

  /**
   * A notification no progress token claims: a 2026-07-28 listen's (its `_meta` subscription id is
   * the listen request's id), else one for the {@link watch}ers.
   */
  private onStray(n: JsonRpcNotification, t: number): void {
    const meta = (n.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
    const sub = meta?.[SUBSCRIPTION_ID_META];
    const p = typeof sub === 'string' || typeof sub === 'number' ? this.pending.get(idKey(sub)) : undefined;
    if (p) return p.onMessage?.(n, t);
    for (const w of this.watchers) w(n, t);
  }

  private answerServerRequest(req: JsonRpcRequest): void {
    this.opts.onViolation?.('server_request', req.method);
    const res: JsonRpcResponse = this.opts.onServerRequest
      ? this.opts.onServerRequest(req)
      : req.method === 'ping'
        ? { jsonrpc: '2.0', id: req.id, result: {} }
        : { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: `mcptap client does not handle ${req.method}` } };
    this.send(res);
  }

  private forget(key: string, p: Pending): void {
    this.deadlines.remove(p);
    this.pending.delete(key);
    this.cancelSent.delete(key);
    if (p.progressToken !== undefined) this.byToken.delete(idKey(p.progressToken));
  }

  private settle(key: string, err: TransportError): void {
    const p = this.pending.get(key);
    if (!p) return;
    const alreadyCancelled = this.cancelSent.has(key);
    this.forget(key, p);
    if (err.errorClass === 'timeout' || err.errorClass === 'aborted') {
      // Given up on: say so to the server (MCP: the sender SHOULD; once), and expect a late answer.
      if (!alreadyCancelled) this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: p.id, reason: err.message } });
      this.gaveUp.add(key);
      if (this.gaveUp.size > MAX_GAVE_UP) this.gaveUp.delete(this.gaveUp.values().next().value!);
    }
    p.reject(err);
  }

  private failAll(reason: string): void {
    this.exitReason = reason;
    for (const key of [...this.pending.keys()]) this.settle(key, new TransportError('child_exit', reason));
  }
}
