/**
 * `mcptap ui FILE.db [FILE.db ...] [--listen HOST:PORT] [--open] [--jaeger URL] [--replay result.json]
 * [--check result.json]`:
 * a local, offline web explorer of recordings (src/explore/ui-*.ts, front end in web/).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { McptapError } from '../../errors.js';
import { RecordingExplorer } from '../../explore/recording-explorer.js';
import { indexCheck, type CheckIndex } from '../../explore/ui-check.js';
import { indexReplay, type ReplayIndex } from '../../explore/ui-replay.js';
import { matchResultFile } from '../../explore/ui-api.js';
import { serveUi } from '../../explore/ui-server.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { listenError } from '../listen-error.js';
import { logLevelOption } from '../log-level-option.js';
import { parseHostPort, untilSignal } from '../serve-flags.js';

interface UiFlags {
  listen: string;
  open?: boolean;
  jaeger?: string;
  replay?: string;
  check?: string;
  allowedHost?: string[];
  allowedOrigin?: string[];
  logLevel: LogLevel;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** dist/web, beside dist/src: the front end compiled by tsconfig.web.json. */
const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url));

export function register(program: Command): void {
  program
    .command('ui')
    .summary('explore recordings in a local web page: exchanges, one exchange, waterfalls, live tail, replay differences, check findings')
    .description(
      'A local, offline web explorer of recording files, opened read-only (nothing is ever written to them): the ' +
        'recordings of each file; their exchanges in a table paged from SQLite as you scroll, filtered by method, tool, ' +
        'outcome, connection, session, duration and text; one exchange with its request and response JSON, HTTP headers, ' +
        'timings, SSE events and progress on a timeline, cancellation, anomalies and trace id; a connection as a ' +
        'waterfall; new exchanges as a running tap records them; with --replay, the recorded and replayed answers side ' +
        'by side; with --check, the findings of `mcptap check` by rule, each linked to its exchange, and in an ' +
        "exchange's detail with their JSON Pointers marked. The page loads nothing from outside its own address.",
    )
    .argument('<files...>', 'recording files (written with --record)')
    .option('--listen <host:port>', 'where to serve (port 0: any free port)', '127.0.0.1:7080')
    .option('--open', 'open the URL in the default browser')
    .option('--jaeger <url>', "Jaeger's base URL: each trace id links to URL/trace/ID")
    .option('--replay <result.json>', 'the JSON of `mcptap replay --json` of one of the files: its differences beside the exchanges')
    .option('--check <result.json>', 'the JSON of `mcptap check --json` of one of the files: its findings, linked to the exchanges')
    .option('--allowed-host <host>', 'another Host header to accept (repeatable; loopback names always are)', collect)
    .option('--allowed-origin <origin>', 'another browser Origin to accept (repeatable)', collect)
    .addOption(logLevelOption('warn'))
    .addHelpText(
      'after',
      `
The URL printed carries a random token (as Jupyter's does): its first visit sets a cookie (HttpOnly,
SameSite=Strict) and drops the token from the address; without it every request gets 401 or 403, so
another user of the machine cannot read the recordings. Host and Origin are checked as mcptap mcp
--http does (DNS rebinding). Bind a non-loopback address only on purpose, with --allowed-host.

Exit codes: 0 ok (SIGINT/SIGTERM), 2 bad command line or a port that cannot be bound, 4 a file that is
not a recording or a --replay or --check file that is not a replay or check result.

Examples:
  mcptap ui tap.db
  mcptap ui before.db after.db --listen 127.0.0.1:0 --open
  mcptap ui tap.db --jaeger http://localhost:16686
  mcptap replay tap.db --json replay.json -- node ./my-server.js; mcptap ui tap.db --replay replay.json   # ; as replay exits 1 on differences
  mcptap check tap.db --json check.json; mcptap ui tap.db --check check.json`,
    )
    .action(async (files: string[], flags: UiFlags) => {
      const logger = createLogger(flags.logLevel);
      const listenAt = parseListen(flags.listen);
      const jaeger = flags.jaeger === undefined ? undefined : parseJaeger(flags.jaeger);
      const replay = flags.replay === undefined ? undefined : readReplay(flags.replay);
      const check = flags.check === undefined ? undefined : readCheck(flags.check);
      const scripts = readScripts();
      const explorer = RecordingExplorer.open(files);
      // A result matched to a file by name only when it must be (a copy, say): said, as it may be a mistake.
      for (const [flag, result] of [
        ['--replay', replay],
        ['--check', check],
      ] as const) {
        const doubt = result && matchResultFile(files, result.file).doubt;
        if (doubt) logger.warn(`${flag} is of ${result.file}: ${doubt}`);
      }
      try {
        const served = await serveUi(explorer, {
          ...listenAt,
          logger,
          scripts,
          ...(jaeger ? { jaeger } : {}),
          ...(replay ? { replay } : {}),
          ...(check ? { check } : {}),
          ...(flags.allowedHost ? { allowedHosts: flags.allowedHost } : {}),
          ...(flags.allowedOrigin ? { allowedOrigins: flags.allowedOrigin } : {}),
        }).catch((err: unknown) => {
          const where = `${listenAt.host}:${listenAt.port}`;
          throw listenError(where, err) ?? new McptapError('MCPTAP_LISTEN', `cannot listen on ${where}: ${(err as Error).message}`);
        });
        process.stderr.write(`mcptap ui: open ${served.url}\n`);
        if (flags.open) openBrowser(served.url, logger.warn.bind(logger));
        await untilSignal();
        await served.close();
      } finally {
        explorer.close();
      }
    });
}

function parseListen(spec: string): { host: string; port: number } {
  try {
    return parseHostPort(spec);
  } catch {
    throw new McptapError('MCPTAP_BAD_FLAG', `--listen must be HOST:PORT (e.g. 127.0.0.1:7080), got ${JSON.stringify(spec)}`);
  }
}

function parseJaeger(spec: string): string {
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new McptapError('MCPTAP_BAD_FLAG', `--jaeger must be an http(s) URL, got ${JSON.stringify(spec)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new McptapError('MCPTAP_BAD_FLAG', `--jaeger must be an http(s) URL, got ${JSON.stringify(spec)}`);
  return url.href.replace(/\/+$/, '');
}

function readReplay(file: string): ReplayIndex {
  return indexReplay(readJson(file, '--replay', 'MCPTAP_UI_BAD_REPLAY'), file);
}

function readCheck(file: string): CheckIndex {
  return indexCheck(readJson(file, '--check', 'MCPTAP_UI_BAD_CHECK'), file);
}

/** A JSON file given to a flag; unreadable or not JSON: `code`, naming flag and file. */
function readJson(file: string, flag: string, code: 'MCPTAP_UI_BAD_REPLAY' | 'MCPTAP_UI_BAD_CHECK'): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new McptapError(code, `cannot read ${flag} ${file}: ${(err as Error).message}`);
  }
}

/** The compiled front end, read once: request paths are looked up in this map, never on disk. */
function readScripts(): Map<string, Buffer> {
  if (!existsSync(WEB_DIR)) throw new McptapError('MCPTAP_UI_NOT_BUILT', `the web front end is not built (${WEB_DIR}): run \`npm run build\``);
  const scripts = new Map<string, Buffer>();
  for (const name of readdirSync(WEB_DIR)) if (name.endsWith('.js')) scripts.set(`/${name}`, readFileSync(`${WEB_DIR}${name}`));
  return scripts;
}

/** The platform's opener, detached; a failure is a warning (the URL is printed anyway). */
function openBrowser(url: string, warn: (m: string) => void): void {
  const [cmd, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  const child = spawn(cmd as string, args as string[], { stdio: 'ignore', detached: true });
  child.on('error', (err) => warn(`--open: ${err.message}; open the URL yourself`));
  child.unref();
}
