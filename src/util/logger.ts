/**
 * Logging goes to stderr only: the stdio tap's stdout belongs to the protocol. Loggers are passed
 * in through constructors; there is no global logger.
 */
import { McptapError } from '../errors.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** Every level, least severe first (the CLI's --log-level choices). */
export const LOG_LEVELS = Object.keys(ORDER) as LogLevel[];

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export function createLogger(level: LogLevel = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const min = ORDER[level];
  // An unknown level would compare false with everything and silence errors too.
  if (min === undefined) throw new McptapError('MCPTAP_BAD_FLAG', `unknown log level ${JSON.stringify(level)} (one of ${LOG_LEVELS.join(', ')})`);
  const at = (lvl: LogLevel) => (msg: string) => {
    if (ORDER[lvl] >= min) write(`mcptap ${lvl}: ${msg}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = createLogger('silent');
