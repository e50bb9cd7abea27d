/**
 * Every CLI command, one file each. A command file exports `register(program)`; add it here.
 */
import type { Command } from 'commander';
import { register as stdio } from './stdio.js';

export type RegisterCommand = (program: Command) => void;

export const COMMANDS: RegisterCommand[] = [stdio];
