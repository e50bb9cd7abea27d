/** `--log-level`, the same on every command: one of the logger's levels, checked by commander (exit 2 otherwise). */
import { Option } from 'commander';
import { LOG_LEVELS, type LogLevel } from '../util/logger.js';

export function logLevelOption(defaultLevel: LogLevel): Option {
  return new Option('--log-level <level>', 'what mcptap itself writes to stderr').choices(LOG_LEVELS).default(defaultLevel);
}
