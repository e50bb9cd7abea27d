/** Building scenarios for tests from YAML text (validated exactly like files). */
import path from 'node:path';
import { loadYaml } from '../../src/load/scenario/scenario-loader.js';
import type { Scenario } from '../../src/load/scenario/scenario.js';

export const FIXTURES = path.resolve(path.dirname(new URL(import.meta.url).pathname), 'fixtures');

export function scenario(yaml: string, source = 'test.yaml'): Scenario {
  return loadYaml(yaml, { source, baseDir: FIXTURES });
}
