/**
 * `mcptap export FILE --otlp URL [--recording N] [--service-name S] [--capture-content]`: send a
 * recording's exchanges to an OpenTelemetry collector as spans with their original timestamps.
 * `--jsonl [OUT]` and `--har [OUT]` write the recording as a file instead (export-file.ts).
 */
import type { Command } from 'commander';
import { exportRecording, type ExportProgress, type ExportRecordingResult } from '../../replay/export-recording.js';
import { redactorFromEnv } from '../../redact/redactor.js';
import { notDelivered } from '../../telemetry/counting-span-processor.js';
import { resolveTelemetryConfig, type TelemetryConfig } from '../../telemetry/telemetry-config.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { McptapError } from '../../errors.js';
import { ExitCode } from '../exit-codes.js';
import { openRecordingFile, pickRecording } from '../recording-file.js';
import { logLevelOption } from '../log-level-option.js';
import { exportToFile } from '../export-file.js';

interface ExportFlags {
  otlp?: string;
  jsonl?: string | true;
  har?: string | true;
  recording?: string;
  serviceName?: string;
  captureContent?: boolean;
  timeout?: string;
  progress?: boolean;
  logLevel: LogLevel;
}

export function register(program: Command): void {
  program
    .command('export')
    .summary('send a recording to an OpenTelemetry collector as spans, or write it as JSONL or HAR')
    .description(
      'Replays a recording through the same span sink the live tap uses: one span per exchange and one mcp.session span ' +
        'per connection, with the original timestamps, names, attributes, progress events and trace parents (from ' +
        "_meta.traceparent). Recordings made by this mcptap version keep the live run's span-id seed, so the exported " +
        'span and trace ids equal the ones the live --otlp export produced. One exception: a recording made with ' +
        "--inject-trace-context holds the bytes the server got, whose traceparent is the tap's own span, so its " +
        "host->server spans come out in the caller's trace but without the caller's parent span. Metrics are not " +
        'exported (their points would carry the time of the export).\n\n' +
        'With --jsonl or --har instead of --otlp, writes the recording as a file other tools read: mcptap JSONL ' +
        '(docs/jsonl-format.md: one JSON-RPC message per line; `mcptap import` turns it back into a recording with the ' +
        'same exchanges) or HAR 1.2 (one entry per HTTP request; stdio recordings: one per exchange, URL stdio://mcptap/METHOD).',
    )
    .argument('<file>', 'recording file written with --record')
    .option('--otlp <url>', 'OTLP/HTTP base URL of the collector (/v1/traces is appended)')
    .option('--jsonl [out]', 'write mcptap JSONL to OUT (stdout when - or absent)')
    .option('--har [out]', 'write HAR 1.2 to OUT (stdout when - or absent)')
    .option('--recording <n>', 'recording number in the file (see mcptap ls; default: the latest)')
    .option('--service-name <name>', 'OpenTelemetry service.name (default: $OTEL_SERVICE_NAME or "mcptap", like the live tap)')
    .option('--capture-content', 'also export tool arguments and results, request params and resource URIs (as recorded: redacted)')
    .option('--timeout <ms>', 'per-request OTLP export timeout including retries (default: $OTEL_EXPORTER_OTLP_TIMEOUT or 10000)')
    .option('--no-progress', 'do not show progress on stderr')
    .addOption(logLevelOption('warn'))
    .addHelpText(
      'after',
      `
Also follows OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf | http/json), OTEL_EXPORTER_OTLP_HEADERS and
OTEL_RESOURCE_ATTRIBUTES. Exit codes: 0 every span delivered (or the file written), 4 not a recording / no such recording /
OUT not writable, 2 OUT is a recording, 5 the collector could not be reached or refused spans. OUT is
written whole or not at all (a temporary file renamed into place); an OUT that exists is replaced, and
said so, unless it is a recording (SQLite): that is refused, so a slip such as --jsonl tap.db cannot
destroy one.

Examples:
  mcptap export tap.db --otlp http://localhost:4318 --recording 2
  mcptap export tap.db --jsonl tap.jsonl           # then: mcptap import tap.jsonl --into copy.db
  mcptap export tap.db --jsonl | jq -c 'select(.message.method == "tools/call")'
  mcptap export tap.db --har tap.har --recording 1 # open in a browser's devtools or a HAR viewer`,
    )
    .action(async (file: string, flags: ExportFlags) => {
      const formats = [flags.otlp !== undefined && '--otlp', flags.jsonl !== undefined && '--jsonl', flags.har !== undefined && '--har'].filter(Boolean);
      if (formats.length !== 1) {
        throw new McptapError(
          'MCPTAP_BAD_FLAG',
          `export needs exactly one of --otlp URL, --jsonl [OUT] or --har [OUT]${formats.length ? ` (got ${formats.join(' and ')})` : ''}`,
        );
      }
      if (flags.otlp === undefined) {
        const format = flags.jsonl !== undefined ? 'jsonl' : 'har';
        const out = flags.jsonl ?? flags.har;
        await exportToFile(file, { format, out: out === true ? undefined : out, recording: flags.recording });
        return;
      }
      process.exitCode = await runExport(file, flags as ExportFlags & { otlp: string });
    });
}

async function runExport(file: string, flags: ExportFlags & { otlp: string }): Promise<number> {
  const logger = createLogger(flags.logLevel);
  const config = exportConfig(flags);
  const store = openRecordingFile(file);
  let result: ExportRecordingResult;
  const progress = progressRenderer(flags.progress !== false);
  try {
    const recordingId = pickRecording(store, file, flags.recording);
    const redactor = redactorFromEnv(process.env, { fields: [], headers: [] });
    result = await exportRecording({ store, recordingId, config, logger, redact: (v) => redactor.redactContent(v), onProgress: progress.update });
  } finally {
    progress.done();
    store.close();
  }
  const spans = result.exchangeSpans + result.sessionSpans;
  const where = config.traces.otlp!.url;
  if (result.failed) {
    const lost = notDelivered(result.counts);
    process.stderr.write(
      `mcptap: export to ${where} failed: the collector could not be reached or refused the spans ` +
        `(${result.counts.exported} delivered, ${lost} lost${result.aborted ? '; stopped at the first failed batch' : ''})\n`,
    );
    return ExitCode.TargetUnavailable;
  }
  const ids = result.liveSpanIds ? 'span ids as exported live' : 'span ids derived from the recording (it predates stored seeds)';
  // A span sampled out (the caller's traceparent, OTEL_TRACES_SAMPLER) is not exported, live or here.
  const unsampled = spans - result.counts.exported;
  const count = unsampled > 0 ? `${result.counts.exported} of ${spans}` : String(spans);
  const why = config.sampler
    ? `sampled out by OTEL_TRACES_SAMPLER=${config.sampler.name} or their caller's trace context`
    : "their caller's trace context says not sampled";
  const sampling = unsampled > 0 ? `; ${unsampled} not exported, as live: ${why}` : '';
  process.stdout.write(
    `exported recording ${result.recordingId}: ${count} spans (${result.exchangeSpans} exchanges, ${result.sessionSpans} sessions) to ${where}; ${ids}${sampling}\n`,
  );
  return ExitCode.Ok;
}

function exportConfig(flags: ExportFlags & { otlp: string }): TelemetryConfig {
  const config = resolveTelemetryConfig(
    {
      otlp: flags.otlp,
      ...(flags.serviceName !== undefined ? { serviceName: flags.serviceName } : {}),
      ...(flags.captureContent ? { captureContent: true } : {}),
    },
    process.env,
  );
  if (flags.timeout !== undefined) {
    const ms = Number(flags.timeout);
    if (!/^\d+$/.test(flags.timeout) || ms <= 0)
      throw new McptapError('MCPTAP_BAD_FLAG', `--timeout must be a positive number of milliseconds, got ${JSON.stringify(flags.timeout)}`);
    config.traces.otlp = { ...config.traces.otlp!, timeoutMillis: ms };
    // The batch processor gives up on an export after its own timeout: one shorter than the
    // exporter's said 'Timeout' for exports that then succeeded.
    if (config.spanQueue.exportTimeoutMillis < ms) config.spanQueue = { ...config.spanQueue, exportTimeoutMillis: ms };
  }
  // Only OTLP: the environment's console exporter is for live taps.
  config.traces = { otlp: config.traces.otlp! };
  return config;
}

/** A bar on a terminal (redrawn at most every 100 ms), a line every 5 s otherwise. */
function progressRenderer(enabled: boolean): { update: (p: ExportProgress) => void; done: () => void } {
  const tty = process.stderr.isTTY === true;
  const every = tty ? 100 : 5000;
  let last = Date.now();
  let drawn = false;
  let latest: ExportProgress | undefined;
  const line = (p: ExportProgress) => {
    const pct = p.totalExchanges > 0 ? Math.min(100, Math.floor((p.exchanges / p.totalExchanges) * 100)) : 100;
    const bar = '#'.repeat(Math.floor(pct / 5)).padEnd(20, '.');
    return `exporting [${bar}] ${p.exchanges}/${p.totalExchanges} exchanges (${pct}%)`;
  };
  return {
    update: (p) => {
      latest = p;
      if (!enabled || Date.now() - last < every) return;
      last = Date.now();
      process.stderr.write(tty ? `\r${line(p)}` : `mcptap: ${line(p)}\n`);
      drawn = tty;
    },
    done: () => {
      if (drawn && latest) process.stderr.write(`\r${line(latest)}\n`);
    },
  };
}
