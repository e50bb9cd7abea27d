/**
 * The demo behind `npm start`: the bundled reference server over Streamable HTTP, behind
 * `mcptap http --record`, loaded with scenarios/demo.yaml (about 20 s, with a progress display),
 * then the load summary and the recording's summary. Everything local: no network, no Docker.
 */
import { fileURLToPath } from 'node:url';
import { startTarget } from '../load/target/target-runtime.js';
import { openTapPipeline } from '../pipeline/tap-pipeline.js';
import { recordingOptions } from '../pipeline/recording-options.js';
import { startHttpTap } from '../tap/http-tap.js';
import { loadScenarioFile } from '../load/scenario/scenario-loader.js';
import { runLoad } from '../load/run/run-load.js';
import { renderSummary } from '../load/report/text-report.js';
import { renderProgressLine } from '../load/report/progress-line.js';
import { thresholdsPassed } from '../load/results/threshold-eval.js';
import { RecordingStore } from '../store/recording-store.js';
import { renderRecordingList } from '../report/recording-list.js';
import { createLogger } from '../util/logger.js';
import type { LoadResult } from '../load/results/load-result.js';

export const DEMO_SCENARIO = fileURLToPath(new URL('../../../scenarios/demo.yaml', import.meta.url));

export interface HttpDemoOptions {
  db: string;
  scenario?: string;
  write?: (text: string) => void;
  /** Progress line on stderr; redrawn in place on a terminal. */
  progress?: boolean;
}

export async function runHttpDemo(opts: HttpDemoOptions): Promise<{ result: LoadResult; passed: boolean; recordingId: number }> {
  const write = opts.write ?? ((t: string) => process.stdout.write(t));
  const logger = createLogger('warn');
  const scenario = await loadScenarioFile(opts.scenario ?? DEMO_SCENARIO);
  // The server runs in its own process, as a real one would; the tap and the load generator share this one.
  const server = await startTarget({ kind: 'reference', transport: 'http', inProcess: false, pool: 1 });
  if (server.kind !== 'http') throw new Error('reference target did not start over HTTP');
  const sinks = await openTapPipeline({ recording: recordingOptions(opts.db), transport: 'http', target: server.url, logger, logLevel: 'warn' });
  const tap = await startHttpTap({ upstream: new URL(server.url), port: 0, pipeline: sinks.input, redactor: sinks.redactor, logger });
  write(`mcptap demo: load (${scenario.source ?? scenario.name}) -> mcptap http --record ${opts.db} (${tap.url}) -> reference server (${server.url})\n`);
  const tty = process.stderr.isTTY === true;
  let result: LoadResult;
  try {
    result = await runLoad(
      { ...scenario, target: { kind: 'http', url: tap.url, headers: {} } },
      {
        logger,
        // The demo's target is the reference server, whose tools its scenario names: a pre-flight
        // would only add its own exchanges to the recording being made.
        preflight: false,
        progressIntervalMs: tty ? 250 : 2000,
        ...(opts.progress !== false
          ? { onProgress: (p) => process.stderr.write(tty ? `\r\x1b[K${renderProgressLine(p)}` : `${renderProgressLine(p)}\n`) }
          : {}),
      },
    );
    if (tty && opts.progress !== false) process.stderr.write('\n');
  } finally {
    await tap.close();
    for (const line of await sinks.close()) logger.warn(line);
    await server.close();
  }
  write('\n' + renderSummary(result));
  const store = RecordingStore.open(opts.db);
  let recordingId: number;
  try {
    const recording = store.listRecordings().at(-1)!;
    recordingId = recording.id;
    write('\nWhat the tap recorded:\n' + renderRecordingList(opts.db, [{ recording, summary: store.summary(recording.id) }]));
  } finally {
    store.close();
  }
  write(
    `\nThe recording is in ${opts.db} (recording ${recordingId}). Inspect it with:\n` +
      `  mcptap ls ${opts.db}\n` +
      `  mcptap show ${opts.db} --outcome tool_error\n` +
      `  mcptap show ${opts.db} --exchange <id>\n` +
      `Run the scenario yourself: mcptap load ${opts.scenario ?? 'scenarios/demo.yaml'} --json result.json\n`,
  );
  return { result, passed: thresholdsPassed(result.thresholds), recordingId };
}
