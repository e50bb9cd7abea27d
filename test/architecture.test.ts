/**
 * The layering rules of the codebase (README, Architecture): no import cycles (madge), nothing
 * outside src/cli imports from it, rooms that must not import others (FORBIDDEN), configuration
 * read from the environment only at the edge, and one namespace of error codes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';
import { ROOT } from './helpers/paths.js';

const SRC = join(ROOT, 'src');

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Module specifiers a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

const rel = (file: string) => relative(ROOT, file).split('\\').join('/');

describe('architecture', () => {
  it('has no import cycles', async () => {
    const graph = await madge(SRC, { fileExtensions: ['ts'], tsConfig: join(ROOT, 'tsconfig.json') });
    expect(graph.circular()).toEqual([]);
    // The graph really was built: every layer is in it.
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(100);
  });

  it('nothing outside src/cli imports from it', () => {
    const offenders = sources()
      .filter((f) => !rel(f).startsWith('src/cli/'))
      .flatMap((f) =>
        importsOf(f)
          .filter((s) => /(^|\/)cli\//.test(s))
          .map((s) => `${rel(f)} -> ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  // Each room, and the rooms it must not import: shared pieces live where they belong
  // (`_meta` keys in protocol/, located YAML and JSON Pointers in data-file/, OTel sinks in telemetry/).
  const FORBIDDEN: Record<string, string[]> = {
    tap: ['client', 'load'],
    sinks: ['telemetry', 'reference', 'load'],
    telemetry: ['load'],
    redact: ['load', 'replay'],
    replay: ['load'],
    check: ['load'],
    'data-file': ['load', 'replay', 'check', 'redact'],
    // The rooms of load: results are data and their algebra, scenarios are what to run; neither runs anything.
    'load/results': ['load/run', 'load/drivers', 'load/executors', 'load/target', 'load/report'],
    'load/scenario': ['load/drivers', 'load/executors', 'load/target', 'load/report'],
  };
  for (const [room, rooms] of Object.entries(FORBIDDEN)) {
    it(`src/${room} imports none of ${rooms.join(', ')}`, () => {
      const offenders = sources(join(SRC, room)).flatMap((f) =>
        importsOf(f)
          .filter((s) => s.startsWith('.'))
          .filter((s) =>
            rooms.some((r) =>
              relative(SRC, join(f, '..', s))
                .split('\\')
                .join('/')
                .startsWith(`${r}/`),
            ),
          )
          .map((s) => `${rel(f)} -> ${s}`),
      );
      expect(offenders).toEqual([]);
    });
  }

  it('reads process.env only in src/cli (and where a child inherits the environment)', () => {
    // A spawned child gets the environment plus the scenario's own variables: Node's API has no other way.
    const allowed = new Set(['src/client/stdio-client.ts']);
    const offenders = sources()
      .filter((f) => !rel(f).startsWith('src/cli/') && !allowed.has(rel(f)))
      .filter((f) => /process\.env\b/.test(readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')))
      .map(rel);
    expect(offenders).toEqual([]);
  });

  it('every error code is in one namespace and thrown somewhere in src', () => {
    const text = sources()
      .filter((f) => rel(f) !== 'src/errors.ts')
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const codes = Object.keys(ERROR_CODES);
    expect(codes.filter((c) => !c.startsWith('MCPTAP_'))).toEqual([]);
    expect(codes.filter((c) => !new RegExp(`'${c}'`).test(text))).toEqual([]);
  });
});
