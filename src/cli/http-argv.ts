/**
 * `mcptap http`'s options: one table that commander's registration (commands/http.ts) and the
 * commander-free fast reader below both use, so that a start-up does not pay for commander and the
 * whole program's help texts before it listens (docs/performance.md, "Start-up"). The reader takes
 * only what it is sure of; anything else (help, an unknown or malformed option, a positional
 * argument, a bad `--log-level`) returns undefined and commander parses the line as always.
 * test/cli/http-argv.test.ts checks that both read every line alike.
 */
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HTTP_TAP_HOST,
  DEFAULT_HTTP_TAP_PORT,
  DEFAULT_MAX_HEADER_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from '../tap/http-tap.js';
import { LOG_LEVELS, type LogLevel } from '../util/logger.js';

/** The flags as commander hands them to the action (camelCased; defaults filled in). */
export interface HttpFlags {
  upstream: string;
  listen: string;
  record?: string;
  requireRecording?: boolean;
  redact?: string;
  check?: string;
  print?: boolean;
  connectTimeout: string;
  responseTimeout: string;
  idleTimeout: string;
  maxBody: string;
  maxHeader: string;
  headerTimeout: string;
  requestTimeout: string;
  drainTimeout: string;
  allowedHost: string[];
  allowedOrigin: string[];
  redactHeader: string[];
  logLevel: LogLevel;
  [telemetryFlag: string]: unknown;
}

/** How an option is read: a value (the last one given wins), a repeatable value, or a flag. */
export type HttpOptionKind = 'value' | 'repeatable' | 'flag';

/** The value options' defaults, as strings (commander's option values are the strings given). */
export const HTTP_DEFAULTS = {
  '--listen': `${DEFAULT_HTTP_TAP_HOST}:${DEFAULT_HTTP_TAP_PORT}`,
  '--connect-timeout': '10000',
  '--response-timeout': '300000',
  '--idle-timeout': '300000',
  '--max-body': String(4 * 1024 * 1024),
  '--max-header': String(DEFAULT_MAX_HEADER_BYTES),
  '--header-timeout': String(DEFAULT_HEADERS_TIMEOUT_MS),
  '--request-timeout': String(DEFAULT_REQUEST_TIMEOUT_MS),
  '--drain-timeout': '10000',
  '--log-level': 'warn',
} as const;

/** Every option of `mcptap http` (the telemetry ones included: telemetry-options.ts adds them to commander). */
export const HTTP_OPTIONS: Readonly<Record<string, HttpOptionKind>> = {
  '--upstream': 'value',
  '--listen': 'value',
  '--record': 'value',
  '--require-recording': 'flag',
  '--connect-timeout': 'value',
  '--response-timeout': 'value',
  '--idle-timeout': 'value',
  '--max-body': 'value',
  '--max-header': 'value',
  '--header-timeout': 'value',
  '--request-timeout': 'value',
  '--drain-timeout': 'value',
  '--allowed-host': 'repeatable',
  '--allowed-origin': 'repeatable',
  '--redact-header': 'repeatable',
  '--redact': 'value',
  '--check': 'value',
  '--print': 'flag',
  '--log-level': 'value',
  '--otlp': 'value',
  '--metrics': 'value',
  '--service-name': 'value',
  '--capture-content': 'flag',
  '--inject-trace-context': 'flag',
};

/** `--max-body` -> `maxBody`, as commander names option values. */
function key(option: string): string {
  return option.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The flags of `mcptap http [options]` (argv without node and the script), read as commander reads
 * them; undefined whenever commander would say or do anything else (help, an error).
 */
export function readHttpArgv(argv: readonly string[]): HttpFlags | undefined {
  if (argv[0] !== 'http') return undefined;
  const flags: Record<string, unknown> = { allowedHost: [], allowedOrigin: [], redactHeader: [] };
  for (const [option, value] of Object.entries(HTTP_DEFAULTS)) flags[key(option)] = value;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const option = eq > 0 ? arg.slice(0, eq) : arg;
    const kind = Object.hasOwn(HTTP_OPTIONS, option) ? HTTP_OPTIONS[option] : undefined;
    if (kind === undefined) return undefined; // help, `--`, a positional argument, an unknown option
    if (kind === 'flag') {
      if (eq > 0) return undefined;
      flags[key(option)] = true;
      continue;
    }
    // A value is the next argument, whatever it looks like (as commander takes it).
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) return undefined;
    if (option === '--log-level' && !(LOG_LEVELS as readonly string[]).includes(value)) return undefined;
    if (kind === 'repeatable') (flags[key(option)] as string[]).push(value);
    else flags[key(option)] = value;
  }
  if (typeof flags.upstream !== 'string') return undefined; // a required option
  return flags as HttpFlags;
}
