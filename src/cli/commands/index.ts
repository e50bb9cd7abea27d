/**
 * Every CLI command, one file each. A command file exports `register(program)`; add it here with
 * its name. Modules are loaded on demand: `mcptap stdio` loads only stdio.ts (and what it imports),
 * so a tap in a host config starts without loading the OpenTelemetry SDK or the load engine unless
 * it uses them. `--help` and unknown commands load them all.
 */
import type { Command } from 'commander';

export type RegisterCommand = (program: Command) => void;

type Loader = () => Promise<{ register: RegisterCommand }>;

export const COMMAND_LOADERS: Record<string, Loader> = {
  stdio: () => import('./stdio.js'),
  http: () => import('./http.js'),
  demo: () => import('./demo.js'),
  reference: () => import('./reference.js'),
  ls: () => import('./ls.js'),
  show: () => import('./show.js'),
  load: () => import('./load.js'),
  'merge-results': () => import('./merge-results.js'),
  export: () => import('./export.js'),
  compare: () => import('./compare.js'),
  report: () => import('./report.js'),
  import: () => import('./import.js'),
  merge: () => import('./merge.js'),
  redact: () => import('./redact.js'),
  mock: () => import('./mock.js'),
  replay: () => import('./replay.js'),
  'probe-cancel': () => import('./probe-cancel.js'),
  check: () => import('./check.js'),
  mcp: () => import('./mcp.js'),
  ui: () => import('./ui.js'),
};

/** The register functions needed to run `argv` (everything when it names no known command). */
export async function commandsFor(argv: readonly string[]): Promise<RegisterCommand[]> {
  const name = argv.find((a) => !a.startsWith('-'));
  if (name === undefined && (argv.includes('-V') || argv.includes('--version'))) return [];
  const wanted = name !== undefined && name in COMMAND_LOADERS ? [COMMAND_LOADERS[name]!] : Object.values(COMMAND_LOADERS);
  return (await Promise.all(wanted.map((load) => load()))).map((m) => m.register);
}
