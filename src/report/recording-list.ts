/**
 * `mcptap ls`: the recordings in a file and, per recording, a per-method table of outcomes and
 * latency percentiles. Pure: data in, string or JSON-ready object out.
 */
import type { MethodSummary, OutcomeCounts, RecordingListing, RecordingSummary } from '../store/types.js';
import { lineSafe, formatTime, formatUs, table } from './format.js';

export interface ListedRecording {
  recording: RecordingListing;
  summary: RecordingSummary;
}

/** `ok 40, tool_error 1`; `-` when empty. `ok` first, the rest by name. */
export function formatOutcomes(o: OutcomeCounts, skipOk = false): string {
  const entries = Object.entries(o).filter(([k, n]) => n && !(skipOk && k === 'ok'));
  entries.sort(([a], [b]) => (a === 'ok' ? -1 : b === 'ok' ? 1 : a.localeCompare(b)));
  return entries.length === 0 ? '-' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}

function durationOf(r: RecordingListing): string {
  return r.endedUs === undefined ? 'not closed (its tap is still running, or the tap or its indexer was killed)' : formatUs(r.endedUs - r.startedUs);
}

/** Why the recording may lack traffic (`meta.incomplete`, written with its end). */
export function incompleteOf(r: Pick<RecordingListing, 'meta'>): string | undefined {
  const why = r.meta?.incomplete;
  return typeof why === 'string' ? why : undefined;
}

function methodTable(methods: readonly MethodSummary[]): string {
  const rows = methods.map((m) => [
    lineSafe(m.tool !== undefined ? `${m.method} ${m.tool}` : m.method || '(none)'),
    String(m.count),
    String(m.outcomes.ok ?? 0),
    formatOutcomes(m.outcomes, true),
    formatUs(m.p50Us),
    formatUs(m.p95Us),
    formatUs(m.p99Us),
    formatUs(m.maxUs),
  ]);
  return table(['METHOD', 'N', 'OK', 'NOT OK', 'P50', 'P95', 'P99', 'MAX'], rows, [1, 2, 4, 5, 6, 7]);
}

export function renderRecordingList(file: string, items: readonly ListedRecording[]): string {
  if (items.length === 0) return `${file}: no recordings\n`;
  const blocks = items.map(({ recording: r, summary: s }) => {
    const dropped = r.droppedQueue + r.droppedWrite;
    const lines = [
      `recording ${r.id}  ${r.transport}  ${lineSafe(r.target)}`,
      `  started ${formatTime(r.startedUs)}  duration ${durationOf(r)}  mcptap ${r.mcptapVersion}`,
      `  exchanges ${r.exchanges} (${formatOutcomes(r.outcomes)})  anomalies ${r.anomalies}` +
        `  dropped ${dropped}${dropped ? ` (queue ${r.droppedQueue}, write ${r.droppedWrite})` : ''}`,
    ];
    const incomplete = incompleteOf(r);
    if (incomplete) lines.push(`  INCOMPLETE: ${lineSafe(incomplete)}`);
    if (s.methods.length > 0) lines.push('', indent(methodTable(s.methods), '  '));
    return lines.join('\n');
  });
  return `${blocks.join('\n\n')}\n`;
}

export function recordingListJson(file: string, items: readonly ListedRecording[]): unknown {
  return {
    file,
    recordings: items.map(({ recording, summary }) => ({
      ...recording,
      durationUs: recording.endedUs === undefined ? null : recording.endedUs - recording.startedUs,
      complete: recording.endedUs !== undefined && incompleteOf(recording) === undefined,
      summary,
    })),
  };
}

export function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => (l ? prefix + l : l))
    .join('\n');
}
