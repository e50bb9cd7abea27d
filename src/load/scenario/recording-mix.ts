/**
 * `from: recording.db`: load taken from recorded traffic. {@link loadRecordedTraffic} reads the
 * client-to-server requests of one recording (the latest by default) with their arrival offsets;
 * two pure views are built from them:
 * - {@link mixFromTraffic}: a step mix. Every method (and tool/prompt/resource target) becomes a
 *   step weighted by how often it was called; its arguments are the recorded params, replayed in
 *   recorded order (the iteration index picks one).
 * - {@link replaySequence}: the recorded calls in arrival order, for `replay:` phases.
 * Recorded `_meta` is kept (a progress token, a trace id), except the protocol's own
 * `io.modelcontextprotocol/*` envelope (the run's era supplies its own). A recorded progress token
 * becomes a fresh one per iteration, so that concurrent calls never share one.
 * Lifecycle traffic (initialize, ping, notifications) is left out: the driver does that itself.
 */
import { McptapError } from '../../errors.js';
import { isRecord } from '../../model/jsonrpc.js';
import type { StoredExchange } from '../../store/types.js';
import type { StepSpec } from './scenario.js';
import type { CompiledTemplate, TemplateContext } from './template.js';

const LIFECYCLE = new Set(['initialize', 'ping', 'notifications/initialized', 'server/discover', 'subscriptions/listen']);
const ENVELOPE_PREFIX = 'io.modelcontextprotocol/';

/** One recorded request, as the load run replays it. */
export interface RecordedCall {
  method: string;
  target?: string;
  /** Recorded params without the era envelope and without the recorded progress token. */
  params: Record<string, unknown> | undefined;
  /** The recorded call carried `_meta.progressToken` (it gets a fresh one per iteration). */
  progress: boolean;
  /** When the request arrived, in µs after the recording's first replayed request. */
  offsetUs: number;
}

export interface RecordedTraffic {
  file: string;
  recordingId: number;
  /** In arrival order. */
  calls: RecordedCall[];
  /** The capabilities the recorded client declared in its (first) initialize. */
  clientCapabilities?: Record<string, unknown>;
  /** The server's own requests and the recorded client's answers (load sessions answer with them). */
  serverRequests: StoredExchange[];
}

export interface RecordingSource {
  file: string;
  /** Which recording of the file (default: the latest). */
  recording?: number;
}

export async function loadRecordedTraffic(src: RecordingSource): Promise<RecordedTraffic> {
  // Imported lazily: only `from:` scenarios need the SQLite binding.
  const { RecordingStore } = await import('../../store/recording-store.js');
  const store = RecordingStore.open(src.file);
  try {
    const id = src.recording ?? store.latestRecordingId();
    if (id === undefined) throw new McptapError('MCPTAP_LOAD_RECORDING_EMPTY', `the recording ${src.file} holds no recordings`);
    if (src.recording !== undefined && !store.getRecording(id)) {
      const ids = store.listRecordings().map((r) => r.id);
      throw new McptapError(
        'MCPTAP_RECORDING_NOT_FOUND',
        `${src.file} has no recording ${id} (it has ${ids.length > 0 ? ids.join(', ') : 'none'}); pick one with from: {file, recording: N} (see mcptap list ${src.file})`,
      );
    }
    const all = store.exchanges({ recordingId: id });
    const requests = all
      // an orphaned exchange is a response nobody asked for: there is no request to send
      .filter((ex) => ex.direction === 'c2s' && ex.state !== 'orphaned' && !LIFECYCLE.has(ex.method))
      .sort((a, b) => a.startUs - b.startUs || a.rowid - b.rowid);
    if (requests.length === 0) throw new McptapError('MCPTAP_LOAD_RECORDING_EMPTY', `recording ${id} of ${src.file} has no client requests to replay`);
    const t0 = requests[0]!.startUs;
    const calls = requests.map((ex): RecordedCall => {
      const { params, progress } = cleanParams((ex.request as { params?: unknown }).params);
      const c: RecordedCall = { method: ex.method, params, progress, offsetUs: ex.startUs - t0 };
      if (ex.target !== undefined) c.target = ex.target;
      return c;
    });
    const traffic: RecordedTraffic = { file: src.file, recordingId: id, calls, serverRequests: all.filter((ex) => ex.direction === 's2c') };
    const init = all.find((ex) => ex.direction === 'c2s' && ex.method === 'initialize');
    const caps = init && isRecord(init.request) && isRecord(init.request.params) ? init.request.params.capabilities : undefined;
    if (isRecord(caps)) traffic.clientCapabilities = caps;
    return traffic;
  } finally {
    store.close();
  }
}

/** Drops the era envelope and the recorded progress token from `_meta`; keeps everything else. */
export function cleanParams(p: unknown): { params: Record<string, unknown> | undefined; progress: boolean } {
  if (!isRecord(p)) return { params: undefined, progress: false };
  const { _meta: meta, ...rest } = p;
  if (!isRecord(meta)) return { params: rest, progress: false };
  const kept = Object.fromEntries(Object.entries(meta).filter(([k]) => k !== 'progressToken' && !k.startsWith(ENVELOPE_PREFIX)));
  const params = Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
  return { params, progress: meta.progressToken !== undefined };
}

/** A progress token unique within the run's phase: `p-<phase>-<iteration>`. */
export function progressToken(ctx: Pick<TemplateContext, 'phase' | 'iteration'>): string {
  return `p-${ctx.phase}-${ctx.iteration}`;
}

/** The call's params for one iteration: a fresh progress token where the recorded call had one. */
export function renderCall(c: RecordedCall, ctx: Pick<TemplateContext, 'phase' | 'iteration'>): Record<string, unknown> | undefined {
  if (!c.progress) return c.params;
  const meta = isRecord(c.params?._meta) ? c.params._meta : {};
  return { ...(c.params ?? {}), _meta: { ...meta, progressToken: progressToken(ctx) } };
}

export function stepName(c: Pick<RecordedCall, 'method' | 'target'>): string {
  return c.target ? `${c.method} ${c.target}` : c.method;
}

function stepOf(c: Pick<RecordedCall, 'method' | 'target'>, weight: number, params: CompiledTemplate): StepSpec {
  const step: StepSpec = { name: stepName(c), weight, method: c.method, params, progress: false, checks: [] };
  if (c.target !== undefined) step.target = c.target;
  return step;
}

/** The step mix of the traffic: one step per method and target, weighted by its call count. */
export function mixFromTraffic(t: RecordedTraffic): StepSpec[] {
  const groups = new Map<string, RecordedCall[]>();
  for (const c of t.calls) {
    const key = `${c.method}\u0000${c.target ?? ''}`;
    const g = groups.get(key);
    if (g) g.push(c);
    else groups.set(key, [c]);
  }
  return [...groups.values()].map((g) => {
    const params: CompiledTemplate = {
      isStatic: g.length === 1 && !g[0]!.progress,
      render: (ctx) => renderCall(g[ctx.iteration % g.length]!, ctx),
    };
    return stepOf(g[0]!, g.length, params);
  });
}

/** The recorded calls in arrival order, each as a one-call step, with its offset. */
export function replaySequence(t: RecordedTraffic): { steps: StepSpec[]; offsetsUs: number[] } {
  const steps = t.calls.map((c) => stepOf(c, 1, { isStatic: !c.progress, render: (ctx) => renderCall(c, ctx) }));
  return { steps, offsetsUs: t.calls.map((c) => c.offsetUs) };
}

/** The step mix of the latest (or the given) recording of `file`. */
export async function stepsFromRecording(file: string, opts: { recordingId?: number } = {}): Promise<StepSpec[]> {
  return mixFromTraffic(await loadRecordedTraffic({ file, ...(opts.recordingId !== undefined ? { recording: opts.recordingId } : {}) }));
}
