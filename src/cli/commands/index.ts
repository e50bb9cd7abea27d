/**
 * Every CLI command, one file each. A command file exports `register(program)`; add it here.
 */
import type { Command } from 'commander';
import { register as stdio } from './stdio.js';
import { register as http } from './http.js';
import { register as demo } from './demo.js';
import { register as reference } from './reference.js';
import { register as ls } from './ls.js';
import { register as show } from './show.js';
import { register as load } from './load.js';
import { register as mergeResults } from './merge-results.js';
import { register as exportCmd } from './export.js';

export type RegisterCommand = (program: Command) => void;

export const COMMANDS: RegisterCommand[] = [stdio, http, demo, reference, ls, show, load, mergeResults, exportCmd];
