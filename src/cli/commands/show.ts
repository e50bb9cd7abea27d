/**
 * `mcptap show FILE [--recording N] [--exchange REF] [--outcome C] [--method M] [--target T]
 * [--anomalies] [--streams] [--limit N] [--full] [--json]`: the exchanges of a recording, one exchange
 * with its frames, the recording's anomalies, or its long-lived streams.
 */
import { Option, type Command } from 'commander';
import { OUTCOMES } from '../../model/outcome.js';
import {
  exchangeDetailJson,
  exchangeJson,
  listedOutcome,
  renderAnomalies,
  renderExchangeDetail,
  renderExchangeList,
  renderLongStreams,
} from '../../report/exchange-view.js';
import type { RecordingStore } from '../../store/recording-store.js';
import type { ListedOutcome, StoredExchange } from '../../store/types.js';
import { McptapError } from '../../errors.js';
import { pickRecording, withRecordingFile } from '../recording-file.js';
import { terminalSafe } from '../../report/format.js';

/** Rows a terminal gets without --limit: a big recording's list is held in memory to be printed. */
const TERMINAL_LIMIT = 1000;

interface ShowFlags {
  recording?: string;
  exchange?: string;
  outcome?: ListedOutcome;
  method?: string;
  target?: string;
  anomalies?: boolean;
  streams?: boolean;
  limit?: string;
  full?: boolean;
  json?: boolean;
  follow?: boolean;
}

export function register(program: Command): void {
  program
    .command('show')
    .summary('show the exchanges, one exchange, the anomalies or the long-lived streams of a recording')
    .description(
      'Without --exchange: one line per exchange (row, id, method, target, outcome, error code, latency, progress count, flags). ' +
        'With --exchange: that exchange with its frames (time offsets, direction, pretty-printed JSON) and anomalies. ' +
        'With --streams: the long-lived streams (standalone GET streams, 2026-07-28 subscriptions/listen) with the notifications each carried.',
    )
    .argument('<file>', 'recording file written with --record')
    .option('--recording <n>', 'recording number from `mcptap ls` (default: the latest)')
    .option('--exchange <ref>', 'JSON-RPC id as shown (1 or "1" — they differ), #ROW, or exchange key')
    .addOption(new Option('--outcome <class>', 'only exchanges with this outcome').choices([...OUTCOMES, 'pending']))
    .option('--method <method>', 'only exchanges of this method')
    .option('--target <name>', 'only exchanges for this tool, prompt or resource')
    .option('--anomalies', "list the recording's anomalies")
    .option('--streams', 'list the long-lived streams (GET, listen): first and last frame, frames, notifications')
    .option('--limit <n>', `at most N exchanges (default on a terminal: ${TERMINAL_LIMIT}; piped: all)`)
    .option('--full', 'do not truncate large payloads')
    .option('--json', 'print JSON instead of text (with --follow: one JSON object per line)')
    .option('--follow', 'keep printing exchanges as a running tap records them (like tail -f), until Ctrl-C or the recording ends')
    .addHelpText(
      'after',
      `
Exit codes: 0 ok, 2 bad command line, 4 no such file, recording or exchange.

Examples:
  mcptap show tap.db                              # one line per exchange (ROW and ID columns)
  mcptap show tap.db --outcome tool_error         # filter by outcome, --method or --target
  mcptap show tap.db --exchange 7                 # the exchange with JSON-RPC id 7, with its frames
  mcptap show tap.db --exchange '#7'              # the exchange in row #7
  mcptap show tap.db --anomalies --recording 2    # protocol violations of recording 2 (mcptap ls numbers them)
  mcptap show tap.db --streams --json             # long-lived streams (GET, subscriptions/listen)
  mcptap show tap.db --json | jq -c '.[] | select(.outcome != "ok") | {id, method, outcome}'
  mcptap show tap.db --follow                     # tail the recording a running tap writes
  mcptap show tap.db --follow --outcome tool_error --json

--follow reads the file read-only, polling it 5 times a second; it prints each exchange once, when it
completes (an exchange in flight waits), and stops with exit 0 on Ctrl-C/SIGTERM or when the recording
ends. Without --recording it follows the recording being written, or waits for the next one to begin.
Exchanges appear as the tap's indexer writes them: at once with --require-recording, else within
MCPTAP_INDEX_LAG_MS (10 s) while traffic flows.`,
    )
    .action(async (file: string, flags: ShowFlags) => {
      if (flags.follow) return follow(file, flags);
      const tty = process.stdout.isTTY === true;
      process.stdout.write(terminalSafe(withRecordingFile(file, (store) => show(store, file, flags, tty))));
    });
}

function show(store: RecordingStore, file: string, flags: ShowFlags, tty: boolean): string {
  // One view at a time: a second one was silently dropped.
  const views = [flags.anomalies && '--anomalies', flags.streams && '--streams', flags.exchange !== undefined && '--exchange'].filter(Boolean);
  if (views.length > 1) throw new McptapError('MCPTAP_BAD_FLAG', `${views.join(' and ')} are views of their own: give one of them`);
  const recordingId = pickRecording(store, file, flags.recording);
  const out = (value: unknown, text: () => string) => (flags.json ? `${JSON.stringify(value, null, 2)}\n` : text());
  if (flags.anomalies) {
    const anomalies = store.anomalies(recordingId);
    return out(anomalies, () => renderAnomalies(anomalies, store.getRecording(recordingId)?.startedUs));
  }
  if (flags.streams) {
    const streams = store.longStreams(recordingId);
    return out(streams, () => renderLongStreams(streams, store.getRecording(recordingId)?.startedUs));
  }
  if (flags.exchange !== undefined) return showOne(store, file, recordingId, flags.exchange, flags);
  const limit = flags.limit !== undefined ? positiveInt(flags.limit, '--limit') : tty && !flags.json ? TERMINAL_LIMIT : undefined;
  const exchanges = store.exchanges({
    recordingId,
    ...(flags.method !== undefined ? { method: flags.method } : {}),
    ...(flags.outcome !== undefined ? { outcome: flags.outcome } : {}),
    ...(flags.target !== undefined ? { target: flags.target } : {}),
    ...(limit !== undefined ? { limit } : {}),
  });
  const more = flags.limit === undefined && exchanges.length === limit ? `(the first ${limit} shown; --limit N for more, or pipe the output for all)\n` : '';
  return out(exchanges.map(exchangeJson), () => renderExchangeList(exchanges) + more);
}

function showOne(store: RecordingStore, file: string, recordingId: number, ref: string, flags: ShowFlags): string {
  const matches = store.exchangesByRef(recordingId, ref);
  const e = matches[0];
  if (!e) {
    // A bare number is an id; a user reading the ROW column may have meant the row.
    const row = /^\d+$/.test(ref) ? store.exchangesByRef(recordingId, `#${ref}`)[0] : undefined;
    const hint = row ? `; row #${ref} is id ${JSON.stringify(row.id)}: --exchange '#${ref}'` : '';
    const what = /^#\d+$/.test(ref)
      ? `in row ${ref} (rows as shown in the ROW column of mcptap show)`
      : `with id ${ref}${hint} (ids as shown in the ID column of mcptap show; "1" with quotes is a string id; #ROW picks a row)`;
    throw new McptapError('MCPTAP_NO_EXCHANGE', `recording ${recordingId} in ${file} has no exchange ${what}`);
  }
  const frames = store.framesOfExchange(recordingId, e.key);
  const anomalies = store.anomalies(recordingId, { exchangeKey: e.key });
  const others = matches.slice(1).map((m) => `#${m.rowid}`);
  if (flags.json) return `${JSON.stringify({ ...(exchangeDetailJson(e, frames, anomalies) as object), otherMatches: others }, null, 2)}\n`;
  const note = others.length ? `note: ${ref} also matches ${others.join(', ')}; pick one with --exchange '#ROW'\n` : '';
  return note + renderExchangeDetail(e, frames, anomalies, { full: flags.full ?? false });
}

function positiveInt(v: string, flag: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1) throw new McptapError('MCPTAP_BAD_FLAG', `${flag} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** `--follow`: the exchanges a running tap records, as they complete; exit 0 on SIGINT/SIGTERM or at the recording's end. */
async function follow(file: string, flags: ShowFlags): Promise<void> {
  const views = [
    flags.anomalies && '--anomalies',
    flags.streams && '--streams',
    flags.exchange !== undefined && '--exchange',
    flags.limit !== undefined && '--limit',
  ];
  const clash = views.filter(Boolean);
  if (clash.length > 0) throw new McptapError('MCPTAP_BAD_FLAG', `--follow prints exchanges as they come: it does not take ${clash.join(' or ')}`);
  const recordingId = flags.recording === undefined ? undefined : positiveInt(flags.recording, '--recording');
  const { followRecording } = await import('../../explore/follow.js');
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const wanted = (e: StoredExchange) =>
    (flags.method === undefined || e.method === flags.method) &&
    (flags.target === undefined || e.target === flags.target) &&
    (flags.outcome === undefined || listedOutcome(e) === flags.outcome);
  let header = true;
  try {
    const end = await followRecording({
      path: file,
      signal: stop.signal,
      ...(recordingId !== undefined ? { recordingId } : {}),
      onWaiting: (what) => process.stderr.write(`mcptap show: waiting for ${what}\n`),
      onStart: ({ recordingId: id, existing }) =>
        process.stderr.write(`mcptap show: following recording ${id} of ${file}${existing ? ` (${existing} exchanges before now not shown)` : ''}\n`),
      onExchanges: (found) => {
        const rows = found.filter(wanted);
        if (rows.length === 0) return;
        if (flags.json) return void process.stdout.write(terminalSafe(rows.map((e) => `${JSON.stringify(exchangeJson(e))}\n`).join('')));
        const text = renderExchangeList(rows);
        process.stdout.write(terminalSafe(header ? text : text.slice(text.indexOf('\n') + 1)));
        header = false;
      },
    });
    if (end === 'ended') process.stderr.write(`mcptap show: the recording ended\n`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
