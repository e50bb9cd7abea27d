/**
 * `mcptap mock FILE (--stdio | --http HOST:PORT)`: serves a recording as an MCP server. Thin:
 * flags -> a MockResponder over the recording's answers -> the stdio or HTTP front end; says the
 * hit and miss counts on stderr when it stops.
 */
import { constants as osConstants } from 'node:os';
import type { Command } from 'commander';
import { McptapError } from '../../errors.js';
import { HttpMissForwarder, type MissForwarder } from '../../mock/miss-forwarder.js';
import { startMockHttpServer } from '../../mock/mock-http-server.js';
import { describeStats, MOCK_MISS_CODE, MockResponder, PACES, UNANSWERED, type Pace, type Unanswered } from '../../mock/mock-responder.js';
import { serveMockStdio } from '../../mock/mock-stdio.js';
import { indexRecordedAnswers, type AnswerIndex } from '../../mock/recorded-answers.js';
import { Redactor, withNames } from '../../redact/redactor.js';
import { loadRules, NO_RULES } from '../../replay/rules.js';
import { createLogger, type Logger, type LogLevel } from '../../util/logger.js';
import { ExitCode } from '../exit-codes.js';
import { listenError } from '../listen-error.js';
import { logLevelOption } from '../log-level-option.js';
import { pickRecording } from '../recording-file.js';
import { openRecordingInput } from '../recording-input.js';
import { redactRulesFromFlags, STOP_SIGNALS } from '../tap-flags.js';
import { parseListen, parseUpstream, startRecordingTap, type RecordingTap } from '../upstream.js';

interface MockFlags {
  stdio?: boolean;
  http?: string;
  path: string;
  recording?: string;
  rules?: string;
  redact?: string;
  pace: string;
  unanswered: string;
  onMiss: string;
  upstream?: string;
  record?: string;
  logLevel: LogLevel;
}

const ON_MISS = ['error', 'passthrough'] as const;

export function register(program: Command): void {
  program
    .command('mock')
    .summary('serve a recording as an MCP server (stdio or HTTP), in the era it was recorded in')
    .description(
      'Answers requests from a recording made with mcptap stdio --record or mcptap http --record. initialize and ' +
        'server/discover get the recorded handshake; every other request is matched by its key: the method plus its ' +
        'params after the match rules (--rules, the same file as replay), with params._meta left out. Identical requests ' +
        'get the recorded answers in recorded order; once they run out, the last answer repeats. Answers go out under the ' +
        "caller's id, recorded progress notifications under the caller's progress token. A request the recording does not " +
        `hold gets JSON-RPC error ${MOCK_MISS_CODE} naming its key and the nearest recorded request, with the JSON path ` +
        'where they differ (or, with --on-miss passthrough, is sent to --upstream).',
    )
    .argument('<file>', 'the recording (SQLite file), or a text baseline (mcptap JSONL)')
    .option('--stdio', 'serve on stdin/stdout (stdout carries only JSON-RPC)')
    .option('--http <host:port>', 'serve Streamable HTTP on HOST:PORT (PORT 0 picks a free one)')
    .option('--path <path>', 'the HTTP endpoint path', '/mcp')
    .option('--recording <n>', 'serve only this recording of the file (see mcptap ls); default all of them, in order')
    .option('--rules <file>', 'match rules (YAML or JSON, docs/replay-rules.md): what to ignore or normalise in request params')
    .option(
      '--redact <file>',
      "the tap's redaction rules the recording was taken with (docs/redaction.md): applied to each request before matching, so a secret the caller sends matches the token recorded in its place",
    )
    .option('--pace <pace>', 'fast: answer at once; recorded: keep the recorded gaps between request, notifications and response', 'fast')
    .option(
      '--unanswered <what>',
      'a recorded request that got no response (cancelled, or open at the end): error: JSON-RPC error -32087; hold: keep it open, replaying its recorded progress, until the caller cancels',
      'error',
    )
    .option('--on-miss <what>', 'error: a JSON-RPC error; passthrough: forward the request to --upstream', 'error')
    .option('--upstream <url>', 'with --on-miss passthrough: the real Streamable HTTP server, e.g. http://127.0.0.1:3001/mcp')
    .option('--record <file>', 'with --on-miss passthrough: record what was forwarded (through the HTTP tap) to this SQLite file')
    .addOption(logLevelOption('warn'))
    .addHelpText(
      'after',
      `
Examples:
  mcptap stdio --record tap.db -- npx -y @modelcontextprotocol/server-everything stdio
  mcptap mock tap.db --stdio                    (as the server command in a host's MCP config)
  mcptap mock tap.db --http 127.0.0.1:7070      (then point the client at http://127.0.0.1:7070/mcp)
  mcptap mock tap.db --http 127.0.0.1:0 --pace recorded --rules rules.yaml
  mcptap mock tap.db --http 127.0.0.1:7070 --on-miss passthrough --upstream http://127.0.0.1:3001/mcp --record misses.db

A miss is JSON-RPC error ${MOCK_MISS_CODE}; its message reads
  mcptap mock: no recorded request matches tools/call {"arguments":{"message":"bye"},"name":"echo"};
  nearest: tools/call {"arguments":{"message":"hi"},"name":"echo"} (differs at /params/arguments/message:
  recorded "hi", requested "bye")
and its data is {key, nearest: {key, path, recorded, requested, differences}}.

On HTTP, a legacy client gets an Mcp-Session-Id from initialize (DELETE ends it); 2026-07-28 requests are stateless.
When it stops (SIGINT/SIGTERM, or the end of stdin with --stdio) it says on stderr how many requests were
answered from the recording and how many missed. Exit codes: 0 served, 1 the --record file lacks traffic
the tap forwarded (it says how many bytes), 2 usage, 4 not a recording or
no exchanges in it, 130/143 stopped by SIGINT/SIGTERM before it served (what it opened is closed first).`,
    )
    .action(async (file: string, flags: MockFlags) => {
      process.exitCode = await runMock(file, flags);
    });
}

async function runMock(file: string, flags: MockFlags): Promise<number> {
  // First of all: a signal during start-up is caught (Node's default exits at once, leaving an
  // unfinished --record file); what was opened is closed, then the shell's exit code (143, 130).
  const stop = untilSignal();
  try {
    const { early, exitCode } = await mockUntil(file, flags, stop);
    return early === undefined ? exitCode : 128 + osConstants.signals[early];
  } finally {
    stop.dispose();
  }
}

/**
 * Serves until stopped: the signal that came before it served, if one did, and the exit code
 * otherwise (not 0 when the passthrough recording lacks forwarded traffic, as `mcptap http` exits).
 */
async function mockUntil(file: string, flags: MockFlags, stop: StopWatch): Promise<{ early?: NodeJS.Signals; exitCode: number }> {
  const logger = createLogger(flags.logLevel);
  const opts = checkFlags(flags);
  const rules = flags.rules !== undefined ? loadRules(flags.rules) : undefined;
  // The default sensitive fields plus the user's rules, as the tap redacted the recording; tokens match
  // whatever token was recorded in their place (mock-matcher.ts), so the key need not be the tap's.
  const redactor = new Redactor(withNames((await redactRulesFromFlags(flags)).redactRules));
  const redactParams = (params: unknown) => redactor.redactJson(params, ['params']);
  const say = (text: string) => process.stderr.write(`mcptap mock: ${text}\n`);
  const stoppedEarly = (): NodeJS.Signals | undefined => {
    const sig = stop.by();
    if (sig !== undefined) say(`${sig} before serving: stopped`);
    return sig;
  };
  if (stop.by() !== undefined) return { early: stoppedEarly(), exitCode: ExitCode.Ok };
  // Open while serving: answers are read from the recording on demand (bounded memory for big ones).
  logger.debug(`opening ${file}`);
  const input = await openRecordingInput(file);
  const store = input.store;
  let recorded: AnswerIndex;
  try {
    // Every recording in the file by default: a client that probes on a short-lived process (the 2.x SDK's
    // version negotiation) leaves its server/discover in a recording of its own.
    const ids = flags.recording !== undefined ? [pickRecording(store, file, flags.recording)] : store.listRecordings().map((r) => r.id);
    recorded = indexRecordedAnswers(store, ids, file, rules ?? NO_RULES);
  } catch (err) {
    input.close();
    throw err;
  }
  try {
    const responder = new MockResponder(recorded, { pace: opts.pace, unanswered: opts.unanswered, redactParams, ...(rules ? { rules } : {}) });
    let tap: RecordingTap | undefined;
    let forwarder: MissForwarder | undefined;
    // A mock that never served (its port taken, or stopped first) has no counts to report.
    let served = false;
    let exitCode: number = ExitCode.Ok;
    try {
      if (opts.upstream && stop.by() === undefined) {
        tap = flags.record ? await startRecordingTap({ upstream: opts.upstream, record: flags.record, logger, logLevel: flags.logLevel }) : undefined;
        if (tap) logger.debug(`recording what it forwards to ${flags.record}`);
        forwarder = new HttpMissForwarder(tap?.url ?? opts.upstream, logger);
      }
      if (opts.listen) served = await serveHttp(opts.listen, flags.path, responder, forwarder, logger, say, recorded, stop);
      else served = await serveStdio(responder, forwarder, stop);
    } finally {
      await forwarder?.close();
      const closed = await tap?.close();
      for (const line of closed?.lines ?? []) logger.warn(line);
      exitCode = closed?.exitCode ?? ExitCode.Ok;
      if (served) say(describeStats(responder.stats));
    }
    return served ? { exitCode } : { early: stoppedEarly(), exitCode };
  } finally {
    input.close();
  }
}

function checkFlags(flags: MockFlags): { pace: Pace; unanswered: Unanswered; listen?: { host: string; port: number }; upstream?: URL } {
  if (Boolean(flags.stdio) === (flags.http !== undefined))
    throw new McptapError('MCPTAP_BAD_FLAG', 'mock serves on one transport: give --stdio or --http HOST:PORT');
  if (!PACES.includes(flags.pace as Pace)) throw new McptapError('MCPTAP_BAD_FLAG', `--pace must be ${PACES.join(' or ')}, got ${JSON.stringify(flags.pace)}`);
  if (!(UNANSWERED as readonly string[]).includes(flags.unanswered))
    throw new McptapError('MCPTAP_BAD_FLAG', `--unanswered must be ${UNANSWERED.join(' or ')}, got ${JSON.stringify(flags.unanswered)}`);
  if (!(ON_MISS as readonly string[]).includes(flags.onMiss))
    throw new McptapError('MCPTAP_BAD_FLAG', `--on-miss must be ${ON_MISS.join(' or ')}, got ${JSON.stringify(flags.onMiss)}`);
  const passthrough = flags.onMiss === 'passthrough';
  if (passthrough && flags.upstream === undefined) throw new McptapError('MCPTAP_BAD_FLAG', '--on-miss passthrough needs --upstream URL (the real server)');
  if (!passthrough && (flags.upstream !== undefined || flags.record !== undefined))
    throw new McptapError('MCPTAP_BAD_FLAG', '--upstream and --record apply to --on-miss passthrough only');
  return {
    pace: flags.pace as Pace,
    unanswered: flags.unanswered as Unanswered,
    ...(flags.http !== undefined ? { listen: parseListen(flags.http, '--http') } : {}),
    ...(passthrough ? { upstream: parseUpstream(flags.upstream!) } : {}),
  };
}

/** Until stdin ends, or a stop signal (then the answers in flight are dropped); false when stopped before it began. */
async function serveStdio(responder: MockResponder, forwarder: MissForwarder | undefined, stop: StopWatch): Promise<boolean> {
  if (stop.by() !== undefined) return false;
  await Promise.race([serveMockStdio({ responder, input: process.stdin, output: process.stdout, ...(forwarder ? { forwarder } : {}) }), stop.signalled]);
  process.stdin.destroy();
  return true;
}

/** Until a stop signal; false when one came before the server was up. */
async function serveHttp(
  listen: { host: string; port: number },
  path: string,
  responder: MockResponder,
  forwarder: MissForwarder | undefined,
  logger: Logger,
  say: (text: string) => void,
  recorded: AnswerIndex,
  stop: StopWatch,
): Promise<boolean> {
  if (stop.by() !== undefined) return false;
  let server;
  try {
    server = await startMockHttpServer({ responder, ...listen, path, logger, ...(forwarder ? { forwarder } : {}) });
  } catch (err) {
    throw listenError(`${listen.host}:${listen.port}`, err) ?? err;
  }
  if (stop.by() !== undefined) {
    await server.close();
    return false;
  }
  // Said once serving: whoever reads this line may stop the mock at once.
  say(`serving ${recorded.count} recorded answers on ${server.url}`);
  await stop.signalled;
  await server.close();
  return true;
}

/** The stop signals, caught from {@link untilSignal} on: the first one's name, and a promise it settles. */
interface StopWatch {
  signalled: Promise<void>;
  by(): NodeJS.Signals | undefined;
  dispose(): void;
}

function untilSignal(): StopWatch {
  let first: NodeJS.Signals | undefined;
  let settle: () => void = () => {};
  const signalled = new Promise<void>((resolve) => (settle = resolve));
  const onSignal = (sig: NodeJS.Signals): void => {
    first ??= sig;
    settle();
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  return { signalled, by: () => first, dispose: () => STOP_SIGNALS.forEach((s) => process.off(s, onSignal)) };
}
