/**
 * Where a worker thread's entry module is. From the build (dist/) it is the compiled `<name>.js`
 * beside the calling module. From the TypeScript sources (vitest, tsx): the build's copy when no
 * source is newer than it (starting a thread through tsx is slow), else `<name>-tsx.mjs`,
 * which registers tsx in the new thread and loads `<name>.ts`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * @param moduleUrl `import.meta.url` of a module in the entry's folder
 * @param name the entry's file name without extension
 * @param distPath the entry's path inside dist/ relative to the repository root, e.g. `dist/src/pipeline/x.js`
 */
export function threadEntry(moduleUrl: string, name: string, distPath: string): URL {
  const compiled = new URL(`./${name}.js`, moduleUrl);
  if (existsSync(fileURLToPath(compiled))) return compiled;
  const srcRoot = new URL('../', new URL('./', moduleUrl));
  const built = new URL(`../${distPath}`, srcRoot);
  const fresh = builtAfterSources(fileURLToPath(built), fileURLToPath(srcRoot));
  return fresh ? built : new URL(`./${name}-tsx.mjs`, moduleUrl);
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
