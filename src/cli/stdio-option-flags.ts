/**
 * The flags of `mcptap stdio`'s options, as commander declares them (`--name <value>` takes a
 * value, `--name` takes none). Commander's registration (commands/stdio.ts, telemetry-options.ts,
 * log-level-option.ts) declares each option with these strings, and the early server spawn
 * (early-server.ts) reads their kinds from them, before commander is loaded. No imports: this
 * module is on the path to the server's early spawn.
 */
export const TAP_FLAGS = {
  record: '--record <file>',
  requireRecording: '--require-recording',
  redact: '--redact <file>',
  check: '--check <file>',
  print: '--print',
} as const;

export const MAX_LINE_BYTES_FLAGS = '--max-line-bytes <n>';

export const LOG_LEVEL_FLAGS = '--log-level <level>';

export const TELEMETRY_FLAGS = {
  otlp: '--otlp <url>',
  metrics: '--metrics <host:port>',
  serviceName: '--service-name <name>',
  captureContent: '--capture-content',
  injectTraceContext: '--inject-trace-context',
} as const;

/** Every option of `mcptap stdio` (test/cli/early-server.test.ts checks it against commander's command). */
export const STDIO_OPTION_FLAGS: readonly string[] = [...Object.values(TAP_FLAGS), MAX_LINE_BYTES_FLAGS, LOG_LEVEL_FLAGS, ...Object.values(TELEMETRY_FLAGS)];
