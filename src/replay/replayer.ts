/**
 * Drives a {@link ReplayPlan} against a target: every step starts once the steps it waits for are
 * done and its pace allows, in its replay session (legacy sessions open with the recorded
 * `initialize`, so the new server mints its own session id). Ids, progress tokens, `requestState`
 * and subscription ids are remapped (replay-remap.ts); the server's own requests are answered from
 * the recording (server-requests.ts); what it sends and gets is told to `--update` (replay-traffic.ts). Never throws for what the target does: a failure becomes the
 * step's answer, with a one-line reason. Steps are started in order, at most {@link WINDOW} at once
 * (waiting or in flight); each reads its exchange from the store when it is sent and hands its
 * answer to `onAnswer` at once, so the replay's memory follows the window, not the recording.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallResult } from '../client/call-result.js';
import { McpSession, numericIds } from '../client/mcp-session.js';
import { TransportError } from '../client/transport-error.js';
import { McptapError } from '../errors.js';
import { idKey, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '../model/jsonrpc.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { ReplayedAnswer } from './compare.js';
import { stepAfter, type PlanExchange, type ReplayPlan, type ReplaySessionPlan } from './replay-plan.js';
import type { StoredExchange, StoredFrame } from '../store/types.js';
import { cancelAsRecorded, NoteSchedule } from './replay-notes.js';
import { ReplayRemap } from './replay-remap.js';
import { TargetHealth } from './target-health.js';
import { answerFrom, CANCELLED_ANSWER, errorOf } from './replayed-answer.js';
import type { ReplayTarget } from './replay-target.js';
import type { ServerAnswers } from './server-answers.js';
import { recordedTimeOf, ReplayTraffic, type TrafficObserver } from './replay-traffic.js';
import { ServerRequests, type AnsweringSession } from './server-requests.js';
import { httpStatusHint } from './transport-hint.js';

/** `recorded`: the recorded gaps; `fast`: only the order; `factor`: N times the recorded rate. */
export type Pace = { kind: 'recorded' } | { kind: 'fast' } | { kind: 'factor'; factor: number };

export type { TrafficObserver } from './replay-traffic.js';

export interface ReplayOptions {
  plan: ReplayPlan<PlanExchange>;
  /** The recorded exchange of a row (the plan holds only row ids). */
  load: (rowid: number) => StoredExchange;
  /** The recorded frame of a row: the plan's notes (the client's notifications), sent when given. */
  loadFrame?: (rowid: number) => StoredFrame | undefined;
  /** Step `index`'s answer, as soon as it is known (every step once, in any order). */
  onAnswer: (index: number, recorded: StoredExchange, answer: ReplayedAnswer) => void;
  target: ReplayTarget;
  answers: ServerAnswers;
  pace: Pace;
  timeoutMs: number;
  observer?: TrafficObserver;
  clock?: Clock;
  /** Stops the replay: nothing more is sent, requests in flight are cancelled, and only the answers before it count. */
  signal?: AbortSignal;
}

export interface ReplayRun {
  /** Steps never sent (their session could not open, or its server was gone). */
  notSent: number;
  /** The first reason the target failed, one line (absent when it never did). */
  failure?: string;
  /** Whether the target answered anything at all. */
  reached: boolean;
  /** Stopped by `signal`: the steps answered before it are all that was handed on. */
  stopped?: true;
}

/** Steps started and not yet done (waiting for their turn or in flight), at most. */
export const WINDOW = 4096;

/** A step being replayed: its place in the plan and its recorded exchange. */
interface ReplayStep {
  index: number;
  exchange: StoredExchange;
  offsetUs: number;
  session: string;
}

interface LiveSession extends AnsweringSession {
  plan: ReplaySessionPlan<PlanExchange>;
  /** Legacy, its initialize a step: settles once that step is done. Requests wait for it, as a client must. */
  initializeDone?: { promise: Promise<void>; settle(): void };
  /** Its initialize, answered when recorded, failed now: why; the session's other requests are not sent. */
  unusable?: string;
  /** Ids and progress tokens of its requests in flight (idKey): a recorded one is sent again only when free. */
  sentIds: Set<string>;
  sentTokens: Set<string>;
}

export async function runReplay(opts: ReplayOptions): Promise<ReplayRun> {
  return new Replayer(opts).run();
}

class Replayer {
  private readonly clock: Clock;
  private readonly remap = new ReplayRemap();
  private readonly sessions = new Map<string, Promise<LiveSession>>();
  private readonly plans: Map<string, ReplaySessionPlan<PlanExchange>>;
  private readonly traffic: ReplayTraffic;
  private readonly serverRequests: ServerRequests;
  private readonly notes: NoteSchedule;
  /** Steps started and not done. */
  private started = 0;
  /** Started steps waiting for others: how many they still wait for. */
  private readonly blockedOn = new Map<number, number>();
  /** Step -> the started steps that wait for it. */
  private readonly dependents = new Map<number, number[]>();
  private readonly done: Uint8Array;
  private next = 0;
  private readonly health = new TargetHealth();
  private t0 = 0;
  /** Aborted with `opts.signal`: cancels what is in flight and the pace's waits. */
  private readonly stop = new AbortController();
  private readonly stopped$ = new Promise<void>((resolve) => this.stop.signal.addEventListener('abort', () => resolve(), { once: true }));

  constructor(private readonly opts: ReplayOptions) {
    this.clock = opts.clock ?? systemClock;
    this.traffic = new ReplayTraffic(this.clock, opts.observer);
    this.serverRequests = new ServerRequests(opts.answers, this.traffic, opts.timeoutMs);
    this.plans = new Map(opts.plan.sessions.map((s) => [s.key, s]));
    this.done = new Uint8Array(opts.plan.size);
    this.notes = new NoteSchedule(opts.loadFrame ? opts.plan.notes : undefined, opts.plan.size, (j) => this.sendNote(j));
    // Every step in the window (up to WINDOW) listens to it: that is no leak.
    setMaxListeners(0, this.stop.signal);
  }

  async run(): Promise<ReplayRun> {
    this.t0 = this.clock.nowUs();
    const onStop = (): void => this.stop.abort();
    if (this.opts.signal?.aborted) onStop();
    this.opts.signal?.addEventListener('abort', onStop, { once: true });
    await new Promise<void>((resolve, reject) => {
      const start = (i: number): void => void this.stepNow(i).then(() => finish(i), reject);
      const finish = (i: number): void => {
        this.done[i] = 1;
        this.notes.stepDone(i);
        this.started--;
        for (const j of this.dependents.get(i) ?? []) {
          const left = this.blockedOn.get(j)! - 1;
          if (left > 0) this.blockedOn.set(j, left);
          else (this.blockedOn.delete(j), start(j));
        }
        this.dependents.delete(i);
        pump();
      };
      // A step waiting for others is a count and an entry in their lists, not a pending promise.
      const pump = (): void => {
        while (!this.stopped && this.next < this.opts.plan.size && this.started < WINDOW) {
          const i = this.next++;
          this.started++;
          let waits = 0;
          for (const d of stepAfter(this.opts.plan, i)) {
            if (this.done[d]) continue;
            waits++;
            const list = this.dependents.get(d);
            if (list) list.push(i);
            else this.dependents.set(d, [i]);
          }
          if (waits === 0) start(i);
          else this.blockedOn.set(i, waits);
        }
        if ((this.stopped || this.next >= this.opts.plan.size) && this.started === 0) resolve();
      };
      this.notes.start();
      pump();
    });
    await this.notes.drain(this.stopped);
    this.opts.signal?.removeEventListener('abort', onStop);
    await this.closeSessions();
    const run: ReplayRun = { notSent: this.health.notSent, reached: this.health.reached };
    if (this.health.failure !== undefined) run.failure = this.health.failure;
    if (this.stopped) run.stopped = true;
    return run;
  }

  private get stopped(): boolean {
    return this.stop.signal.aborted;
  }

  /** Step `i`, its dependencies done: after its pace, sent. */
  private async stepNow(i: number): Promise<void> {
    const plan = this.opts.plan;
    await this.paceWait(plan.offsetsUs[i]!);
    if (this.stopped) return;
    const step: ReplayStep = {
      index: i,
      exchange: this.opts.load(plan.rowids[i]!),
      offsetUs: plan.offsetsUs[i]!,
      session: plan.sessions[plan.sessionOf[i]!]!.key,
    };
    this.answer(step, await this.runStep(step));
  }

  /** Hands the step's answer on, with the server requests charged to it. */
  private answer(step: ReplayStep, a: ReplayedAnswer): void {
    if (this.stopped) return; // cut short by the stop: neither same nor different, not counted
    this.opts.onAnswer(step.index, step.exchange, { ...a, unexpectedServerRequests: this.serverRequests.take(step.index) });
  }

  private async runStep(step: ReplayStep): Promise<ReplayedAnswer> {
    let live: LiveSession;
    try {
      live = await this.session(step.session);
    } catch (err) {
      return this.skip(reasonOf(err));
    }
    const opening = step.exchange.method === 'initialize' && live.plan.era === 'legacy';
    if (opening) {
      try {
        const a = await this.sendStep(step, live, true);
        if (!live.session.isInitialized && step.exchange.outcome === 'ok') live.unusable ??= `initialize failed: ${a.transportError ?? errorOf(a)}`;
        return a;
      } finally {
        live.initializeDone?.settle();
      }
    }
    // A client that pipelined its requests behind initialize (stdio allows it) has them sent after
    // its answer: over HTTP they need its session id, and no server must take them before.
    if (step.exchange.method !== 'ping' && live.initializeDone) await Promise.race([live.initializeDone.promise, this.stopped$]);
    if (live.unusable !== undefined) return this.skip(live.unusable);
    const notes = this.notes.ready(step.index);
    if (notes) await Promise.race([notes, this.stopped$]);
    return this.sendStep(step, live, false);
  }

  private async sendStep(step: ReplayStep, live: LiveSession, opening: boolean): Promise<ReplayedAnswer> {
    if (this.stopped) return CANCELLED_ANSWER;
    const gone = live.conn.goneReason() ?? this.health.gone;
    if (gone !== undefined) return this.skip(gone);
    const recorded = step.exchange.request as JsonRpcRequest;
    // The recorded id and token where free, so a server that echoes them answers as recorded.
    const sentId = freeId(live, recorded.id);
    const { request, progressToken } = this.remap.outgoing(recorded, sentId, (t) => !live.sentTokens.has(idKey(t)));
    const held = [idKey(sentId), progressToken === undefined ? undefined : idKey(progressToken)] as const;
    live.sentIds.add(held[0]);
    if (held[1] !== undefined) live.sentTokens.add(held[1]);
    const cancel = cancelAsRecorded(step, live, sentId, this.traffic, (us) => this.scaled(us));
    live.inFlight.add(step.index);
    const onMessage = (m: JsonRpcMessage, t: number) => this.serverRequests.inStep(live, step.index, m, t, recordedTimeOf(step.exchange, m, sentId));
    const signal = cancel ? AbortSignal.any([cancel.signal, this.stop.signal]) : this.stop.signal;
    this.traffic.sent(step.session, request, live.session.headerContext, step.exchange.startUs);
    this.notes.stepSent(step.index);
    try {
      const result = opening ? await live.session.open(request, { onMessage, signal }) : await live.session.send(request, { onMessage, signal });
      if (opening && live.session.isInitialized) await this.sentInitialized(live);
      if (result.response !== undefined || result.httpStatus !== undefined) this.health.answered();
      const back = (res: JsonRpcResponse) => this.remap.back(res, recorded, step.exchange.response, sentId);
      return answerFrom(step.exchange.method, result, back, live.conn.channel.transport === 'http');
    } catch (err) {
      return this.failed(live, err);
    } finally {
      cancel?.stop();
      live.inFlight.delete(step.index);
      live.sentIds.delete(held[0]);
      if (held[1] !== undefined) live.sentTokens.delete(held[1]);
    }
  }

  /** Note `j` (a client notification), at its pace, once its session is open; not sent when the session cannot be used. */
  private async sendNote(j: number): Promise<void> {
    const notes = this.opts.plan.notes!;
    await this.paceWait(notes.offsetsUs[j]!);
    if (this.stopped) return;
    const key = this.opts.plan.sessions[notes.sessionOf[j]!]!.key;
    const live = await this.session(key).catch(() => undefined);
    if (live?.initializeDone) await Promise.race([live.initializeDone.promise, this.stopped$]);
    if (!live || this.stopped || live.unusable !== undefined || (live.conn.goneReason() ?? this.health.gone) !== undefined) return;
    const frame = this.opts.loadFrame!(notes.rowids[j]!);
    if (frame?.kind !== 'message' || !('method' in frame.message) || 'id' in frame.message) return;
    this.traffic.sent(key, frame.message, live.session.headerContext, frame.timeUs);
    await live.session.notify(frame.message, { signal: this.stop.signal });
  }

  private failed(live: LiveSession, err: unknown): ReplayedAnswer {
    if (!(err instanceof TransportError)) throw err;
    if (this.stopped) return CANCELLED_ANSWER;
    // A recorded cancellation, replayed: the request's answer is its cancellation.
    if (err.errorClass === 'aborted') return CANCELLED_ANSWER;
    const why = live.conn.goneReason() ?? err.message;
    this.health.failed(err.errorClass, why);
    return { outcome: 'transport_error', isError: false, progressCount: 0, unexpectedServerRequests: [], transportError: why };
  }

  /** Not sent: the session could not open or its server is gone. */
  private skip(why: string): ReplayedAnswer {
    if (this.stopped) return CANCELLED_ANSWER; // not counted: the stop is said instead
    const transportError = this.health.skipped(why);
    return { outcome: 'unanswered', isError: false, progressCount: 0, unexpectedServerRequests: [], transportError, notSent: true };
  }

  private session(key: string): Promise<LiveSession> {
    let s = this.sessions.get(key);
    if (!s) {
      s = this.openSession(this.plans.get(key)!);
      this.sessions.set(key, s);
    }
    return s;
  }

  private async openSession(plan: ReplaySessionPlan<PlanExchange>): Promise<LiveSession> {
    const holder: { live?: LiveSession } = {};
    const conn = await this.opts.target.connect((req) =>
      holder.live ? this.serverRequests.answer(holder.live, req) : { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'not ready' } },
    );
    const session = new McpSession(conn.channel, {
      era: plan.era,
      ids: numericIds(),
      timeoutMs: this.opts.timeoutMs,
      ...(plan.era === 'modern' && plan.protocolVersion !== undefined ? { protocolVersion: plan.protocolVersion } : {}),
    });
    const live: LiveSession = { key: plan.key, plan, conn, session, inFlight: new Set(), sentIds: new Set(), sentTokens: new Set() };
    if (plan.era === 'legacy' && this.opts.plan.initializeIsStep.has(plan.key)) {
      let settle = (): void => undefined;
      const promise = new Promise<void>((resolve) => (settle = resolve));
      live.initializeDone = { promise, settle };
    }
    holder.live = live;
    this.traffic.opened(plan.key);
    if (plan.era === 'legacy' && plan.initialize === undefined && !this.opts.plan.initializeIsStep.has(plan.key)) {
      await this.handshake(live, () => session.initialize({ signal: this.stop.signal }));
    } else if (plan.initialize !== undefined) {
      const recorded = this.opts.load(plan.initialize.rowid);
      const { request } = this.remap.outgoing(recorded.request as JsonRpcRequest, session.nextId());
      this.traffic.sent(plan.key, request, undefined, recorded.startUs);
      const recordedEnd = recorded.endUs ?? recorded.startUs;
      await this.handshake(live, () =>
        session.open(request, { onMessage: (m, t) => this.traffic.received(plan.key, m, t, undefined, recordedEnd), signal: this.stop.signal }),
      );
    }
    return live;
  }

  /** Opens a session whose `initialize` is not compared: a failure stops the session's steps. */
  private async handshake(live: LiveSession, open: () => Promise<CallResult>): Promise<void> {
    const res = await open();
    if (res.response !== undefined || res.httpStatus !== undefined) this.health.answered();
    if (!live.session.isInitialized) {
      const err = res.response?.error;
      const why = err
        ? `initialize failed: ${err.message} (${err.code})`
        : `initialize got no answer${res.httpStatus ? ` (HTTP ${res.httpStatus})${httpStatusHint('initialize', res.httpStatus)}` : ''}`;
      throw new McptapError('MCPTAP_REPLAY_TARGET_UNAVAILABLE', why);
    }
    await this.sentInitialized(live);
  }

  private async sentInitialized(live: LiveSession): Promise<void> {
    this.traffic.sent(live.plan.key, { jsonrpc: '2.0', method: 'notifications/initialized' }, live.session.headerContext);
    // As the SDK clients do: the server's own requests (roots/list) come on this stream.
    await Promise.race([this.serverRequests.holdStream(live), this.stopped$]);
  }

  private async closeSessions(): Promise<void> {
    for (const p of this.sessions.values()) {
      const live = await p.catch(() => undefined);
      if (!live) continue;
      await live.serverStream?.close();
      // Stopped, or the target is gone: it is closed next, with no request that a hung server could hold up.
      if (!this.stopped && this.health.gone === undefined) await live.session.close();
      this.traffic.closed(live.plan.key);
    }
  }

  private scaled(us: number): number {
    const pace = this.opts.pace;
    return pace.kind === 'fast' ? 0 : pace.kind === 'factor' ? us / pace.factor : us;
  }

  private async paceWait(offsetUs: number): Promise<void> {
    const waitMs = (this.t0 + this.scaled(offsetUs) - this.clock.nowUs()) / 1000;
    // Nothing more is sent once the target is unreachable: no reason to wait for the steps' turns.
    if (waitMs <= 1 || this.stopped || this.health.gone !== undefined) return;
    await sleep(waitMs, undefined, { signal: this.stop.signal }).catch(() => undefined); // rejects when stopped
  }
}

/** `recorded` when no request in flight in the session carries it, else the session's next id that none does. */
function freeId(live: LiveSession, recorded: JsonRpcId): JsonRpcId {
  let id = recorded;
  while (live.sentIds.has(idKey(id))) id = live.session.nextId();
  return id;
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
