/**
 * Reading scenario files: YAML (`.yaml`, `.yml`) for declarative runs, TypeScript or JavaScript
 * modules (`.ts`, `.mts`, `.js`, `.mjs`) exporting `defineScenario({...})` as default for scripted
 * ones (TypeScript is loaded through tsx's ESM API). Every problem becomes one McptapError with
 * exit code InvalidInput, naming the file, the line (YAML) and the field.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { McptapError } from '../../errors.js';
import type { Scenario } from './scenario.js';
import { validateScenario } from './scenario-validate.js';
import { parseYamlSource } from '../../data-file/yaml-source.js';

export { yamlLocator } from '../../data-file/yaml-source.js';

export async function loadScenarioFile(file: string, opts: { driver?: 'raw' } = {}): Promise<Scenario> {
  const abs = path.resolve(file);
  const source = path.relative(process.cwd(), abs) || file;
  const baseDir = path.dirname(abs);
  const ctx = { source, baseDir, ...(opts.driver ? { driver: opts.driver } : {}) };
  if (/\.(ya?ml)$/i.test(abs)) return loadYaml(await readText(abs, source), ctx);
  if (/\.(m?ts|m?js|cts|cjs)$/i.test(abs)) {
    await readText(abs, source); // same "missing file" message as for YAML
    return validateScenario(await importModule(abs, source), ctx);
  }
  if (existsSync(abs) && statSync(abs).isDirectory())
    throw new McptapError('MCPTAP_LOAD_SCENARIO_MISSING', `${source} is a directory: give a scenario file (.yaml/.yml, or .ts/.js)`);
  throw new McptapError('MCPTAP_LOAD_SCENARIO_TYPE', `${source}: unknown scenario file type; use .yaml/.yml, or .ts/.js exporting defineScenario(...)`);
}

async function readText(abs: string, source: string): Promise<string> {
  try {
    return await readFile(abs, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new McptapError('MCPTAP_LOAD_SCENARIO_MISSING', `cannot read the scenario ${source}: ${why}`);
  }
}

/** Parse YAML text and validate it; messages point at lines of `source`. */
export function loadYaml(text: string, ctx: { source: string; baseDir: string; driver?: 'raw' }): Scenario {
  const { value, locate } = parseYamlSource(
    text,
    (line, what) => new McptapError('MCPTAP_LOAD_SCENARIO_YAML', `${ctx.source}:${line}: not valid YAML: ${what}`),
  );
  return validateScenario(value, { ...ctx, locate });
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
    throw new McptapError('MCPTAP_LOAD_SCENARIO_MODULE', `${source}: the scenario module failed to load: ${msg}`);
  }
  let value = mod.default ?? mod.scenario;
  // A .ts file outside an ESM package is compiled to CommonJS: its default export arrives wrapped.
  const wrapped = value as { default?: unknown; target?: unknown } | undefined;
  if (wrapped && typeof wrapped === 'object' && wrapped.default !== undefined && wrapped.target === undefined) value = wrapped.default;
  if (value === undefined) {
    throw new McptapError('MCPTAP_LOAD_SCENARIO_MODULE', `${source}: the module must \`export default defineScenario({...})\``);
  }
  return value;
}
