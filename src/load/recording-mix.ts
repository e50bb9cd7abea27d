/**
 * `from: recording.db`: a step mix taken from recorded traffic. Every client-to-server request
 * method (and tool/prompt/resource target) seen in the recording becomes a step weighted by how
 * often it was called; its arguments are the recorded params, replayed in recorded order (the
 * iteration index picks one), without the recorded `_meta` (the run's era supplies its own).
 * Lifecycle traffic (initialize, ping, notifications) is left out: the driver does that itself.
 */
import { McptapError } from '../errors.js';
import { isRecord } from '../model/jsonrpc.js';
import type { StepSpec } from './scenario.js';
import type { CompiledTemplate } from './template.js';

const LIFECYCLE = new Set(['initialize', 'ping', 'notifications/initialized', 'server/discover', 'subscriptions/listen']);

interface Group {
  method: string;
  target?: string;
  params: (Record<string, unknown> | undefined)[];
}

export interface RecordingMixOptions {
  /** Which recording of the file (default: the latest). */
  recordingId?: number;
}

export async function stepsFromRecording(file: string, opts: RecordingMixOptions = {}): Promise<StepSpec[]> {
  // Imported lazily: only `from:` scenarios need the SQLite binding.
  const { RecordingStore } = await import('../store/recording-store.js');
  const store = RecordingStore.open(file);
  try {
    const id = opts.recordingId ?? store.latestRecordingId();
    if (id === undefined) throw new McptapError('LOAD_RECORDING_EMPTY', `the recording ${file} holds no recordings`);
    const groups = new Map<string, Group>();
    for (const ex of store.exchanges({ recordingId: id })) {
      if (ex.direction !== 'c2s' || LIFECYCLE.has(ex.method)) continue;
      const key = `${ex.method}\u0000${ex.target ?? ''}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { method: ex.method, target: ex.target, params: [] }));
      g.params.push(stripMeta((ex.request as { params?: unknown }).params));
    }
    if (groups.size === 0) throw new McptapError('LOAD_RECORDING_EMPTY', `recording ${id} of ${file} has no client requests to replay`);
    return [...groups.values()].map(toStep);
  } finally {
    store.close();
  }
}

function stripMeta(p: unknown): Record<string, unknown> | undefined {
  if (!isRecord(p)) return undefined;
  const { _meta: _ignored, ...rest } = p;
  return rest;
}

function toStep(g: Group): StepSpec {
  const params: CompiledTemplate = { isStatic: g.params.length === 1, render: (ctx) => g.params[ctx.iteration % g.params.length] };
  const step: StepSpec = {
    name: g.target ? `${g.method} ${g.target}` : g.method,
    weight: g.params.length,
    method: g.method,
    params,
    progress: false,
    checks: [],
  };
  if (g.target !== undefined) step.target = g.target;
  return step;
}
