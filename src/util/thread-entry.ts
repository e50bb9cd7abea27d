/**
 * Where the entry module of a worker thread or child process is. From the build (dist/) it is the
 * compiled `<name>.js` beside the calling module. From the TypeScript sources (vitest, tsx): the
 * build's copy when no source is newer than it (starting through tsx is slow and costs a second of
 * CPU), else undefined (`threadEntry`: `<name>-tsx.mjs`, which registers tsx and loads `<name>.ts`).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The compiled `<name>.js` for a module beside `moduleUrl`: its sibling in dist/, or, from
 * `<root>/src/…`, the fresh build's copy in `<root>/dist/src/…`; undefined when there is none.
 * @param moduleUrl `import.meta.url` of a module in the entry's folder
 * @param name the entry's file name without extension
 */
export function compiledModule(moduleUrl: string, name: string): URL | undefined {
  const compiled = new URL(`./${name}.js`, moduleUrl);
  if (existsSync(fileURLToPath(compiled))) return compiled;
  const at = moduleUrl.lastIndexOf('/src/');
  if (at === -1) return undefined;
  const root = moduleUrl.slice(0, at + 1);
  const built = new URL(`dist/${compiled.href.slice(at + 1)}`, root);
  return builtAfterSources(fileURLToPath(built), fileURLToPath(new URL('src/', root))) ? built : undefined;
}

/** A worker thread's entry: the compiled module when there is a fresh one, else `<name>-tsx.mjs`. */
export function threadEntry(moduleUrl: string, name: string): URL {
  return compiledModule(moduleUrl, name) ?? new URL(`./${name}-tsx.mjs`, moduleUrl);
}

/** Is `built` newer than every .ts file under `srcDir`? (A stale build must never run.) */
function builtAfterSources(built: string, srcDir: string): boolean {
  const newerThanAll = (dir: string, ms: number): boolean =>
    readdirSync(dir, { withFileTypes: true }).every((d) =>
      d.isDirectory() ? newerThanAll(join(dir, d.name), ms) : !d.name.endsWith('.ts') || statSync(join(dir, d.name)).mtimeMs <= ms,
    );
  try {
    return newerThanAll(srcDir, statSync(built).mtimeMs);
  } catch {
    return false;
  }
}
