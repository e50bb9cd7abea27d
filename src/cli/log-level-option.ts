/** `--log-level`, the same on every command: one of the logger's levels, checked by commander (exit 2 otherwise). */
import { Option } from 'commander';
import { LOG_LEVELS, type LogLevel } from '../util/logger.js';
import { LOG_LEVEL_FLAGS } from './stdio-option-flags.js';

export function logLevelOption(defaultLevel: LogLevel): Option {
  return new Option(LOG_LEVEL_FLAGS, 'what mcptap itself writes to stderr').choices(LOG_LEVELS).default(defaultLevel);
}
