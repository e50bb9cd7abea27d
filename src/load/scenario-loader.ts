/**
 * Reading scenario files: YAML (`.yaml`, `.yml`) for declarative runs, TypeScript or JavaScript
 * modules (`.ts`, `.mts`, `.js`, `.mjs`) exporting `defineScenario({...})` as default for scripted
 * ones (TypeScript is loaded through tsx's ESM API). Every problem becomes one McptapError with
 * exit code InvalidInput, naming the file, the line (YAML) and the field.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { McptapError } from '../errors.js';
import type { Scenario } from './scenario.js';
import { validateScenario } from './scenario-validate.js';
import type { Locator, Path } from './validation.js';

export async function loadScenarioFile(file: string): Promise<Scenario> {
  const abs = path.resolve(file);
  const source = path.relative(process.cwd(), abs) || file;
  const baseDir = path.dirname(abs);
  if (/\.(ya?ml)$/i.test(abs)) return loadYaml(await readText(abs, source), { source, baseDir });
  if (/\.(m?ts|m?js|cts|cjs)$/i.test(abs)) {
    await readText(abs, source); // same "missing file" message as for YAML
    return validateScenario(await importModule(abs, source), { source, baseDir });
  }
  throw new McptapError('LOAD_SCENARIO_TYPE', `${source}: unknown scenario file type; use .yaml/.yml, or .ts/.js exporting defineScenario(...)`);
}

async function readText(abs: string, source: string): Promise<string> {
  try {
    return await readFile(abs, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new McptapError('LOAD_SCENARIO_MISSING', `cannot read the scenario ${source}: ${why}`);
  }
}

/** Parse YAML text and validate it; messages point at lines of `source`. */
export function loadYaml(text: string, ctx: { source: string; baseDir: string }): Scenario {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const line = e.linePos?.[0]?.line ?? lc.linePos(e.pos[0]).line;
    const what = e.message.split('\n')[0];
    throw new McptapError('LOAD_SCENARIO_YAML', `${ctx.source}:${line}: not valid YAML: ${what}`);
  }
  return validateScenario(doc.toJS(), { ...ctx, locate: yamlLocator(doc, lc) });
}

/** The line of a path's value (or of its key) in the document; the deepest existing node otherwise. */
export function yamlLocator(doc: Document, lc: LineCounter): Locator {
  return (p: Path, atKey: boolean) => {
    let node: unknown = doc.contents;
    let offset: number | undefined = rangeStart(node);
    for (const [i, seg] of p.entries()) {
      const last = i === p.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
        if (!pair) break;
        offset = rangeStart(atKey && last ? pair.key : (pair.value ?? pair.key)) ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
        node = node.items[seg];
        offset = rangeStart(node) ?? offset;
      } else break;
    }
    return offset === undefined ? undefined : lc.linePos(offset).line;
  };
}

function rangeStart(n: unknown): number | undefined {
  const r = (n as { range?: [number, number, number] } | null)?.range;
  return r ? r[0] : undefined;
}

async function importModule(abs: string, source: string): Promise<unknown> {
  let mod: { default?: unknown; scenario?: unknown };
  try {
    if (/\.(m?ts|cts)$/i.test(abs)) {
      const { tsImport } = await import('tsx/esm/api');
      mod = (await tsImport(pathToFileURL(abs).href, import.meta.url)) as typeof mod;
    } else mod = (await import(pathToFileURL(abs).href)) as typeof mod;
  } catch (err) {
    const msg = (err as Error)?.message?.split('\n')[0] ?? String(err);
    throw new McptapError('LOAD_SCENARIO_MODULE', `${source}: the scenario module failed to load: ${msg}`);
  }
  let value = mod.default ?? mod.scenario;
  // A .ts file outside an ESM package is compiled to CommonJS: its default export arrives wrapped.
  const wrapped = value as { default?: unknown; target?: unknown } | undefined;
  if (wrapped && typeof wrapped === 'object' && wrapped.default !== undefined && wrapped.target === undefined) value = wrapped.default;
  if (value === undefined) {
    throw new McptapError('LOAD_SCENARIO_MODULE', `${source}: the module must \`export default defineScenario({...})\``);
  }
  return value;
}
