import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compiledModule, threadEntry } from '../../src/util/thread-entry.js';

/** A checkout: src/a/b/caller.ts beside entry.ts, and the build's dist/src/a/b/entry.js. */
function checkout(): { root: string; caller: string; built: string; source: string } {
  const root = mkdtempSync(join(tmpdir(), 'mcptap-entry-'));
  mkdirSync(join(root, 'src/a/b'), { recursive: true });
  mkdirSync(join(root, 'dist/src/a/b'), { recursive: true });
  const source = join(root, 'src/a/b/entry.ts');
  for (const f of [source, join(root, 'src/a/b/caller.ts'), join(root, 'src/top.ts')]) writeFileSync(f, '');
  const built = join(root, 'dist/src/a/b/entry.js');
  writeFileSync(built, '');
  utimesSync(built, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
  return { root, caller: pathToFileURL(join(root, 'src/a/b/caller.ts')).href, built, source };
}

describe('compiledModule / threadEntry', () => {
  it("from the sources, the build's copy while no source is newer than it", () => {
    const c = checkout();
    expect(compiledModule(c.caller, 'entry')?.href).toBe(pathToFileURL(c.built).href);
    expect(threadEntry(c.caller, 'entry').href).toBe(pathToFileURL(c.built).href);
  });

  it('a source anywhere under src/ newer than the build: no compiled module, the tsx entry for a thread', () => {
    const c = checkout();
    const later = new Date(Date.now() + 120_000);
    utimesSync(join(c.root, 'src/top.ts'), later, later);
    expect(compiledModule(c.caller, 'entry')).toBeUndefined();
    expect(threadEntry(c.caller, 'entry').href).toBe(pathToFileURL(join(c.root, 'src/a/b/entry-tsx.mjs')).href);
  });

  it('from the build itself: the sibling .js', () => {
    const c = checkout();
    const caller = pathToFileURL(join(c.root, 'dist/src/a/b/caller.js')).href;
    expect(compiledModule(caller, 'entry')?.href).toBe(pathToFileURL(c.built).href);
  });

  it('no build at all: none', () => {
    const root = mkdtempSync(join(tmpdir(), 'mcptap-entry-'));
    mkdirSync(join(root, 'src'), { recursive: true });
    expect(compiledModule(pathToFileURL(join(root, 'src/caller.ts')).href, 'entry')).toBeUndefined();
  });
});
