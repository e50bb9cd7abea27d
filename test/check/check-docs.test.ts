/** Every rule of the catalogue has its section in docs/check.md (anchor = id with `/` as `-`), with a failing example. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ruleCatalogue } from '../../src/check/catalogue.js';
import { CHECKER_FACTORIES } from '../../src/check/checkers.js';
import { ruleAnchor } from '../../src/report/check-view.js';
import { ROOT } from '../helpers/paths.js';

const docs = readFileSync(join(ROOT, 'docs', 'check.md'), 'utf8');

describe('docs/check.md', () => {
  const rules = ruleCatalogue(CHECKER_FACTORIES);

  it.each(rules.map((r) => [r.id]))('has a section for %s with a failing example', (id) => {
    const anchor = `<a id="${ruleAnchor(id)}"></a>\n### ${id}\n`;
    expect(docs).toContain(anchor);
    const section = docs.slice(docs.indexOf(anchor) + anchor.length).split('\n<a id=')[0]!;
    expect(section).toMatch(/[Ff]ailing\s+example/);
  });

  it('has stable, well-formed rule ids: family/kebab-name, unique', () => {
    for (const r of rules) expect(r.id).toMatch(new RegExp(`^${r.family}/[a-z0-9]+(-[a-z0-9]+)*$`));
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
  });
});
