#!/usr/bin/env node
// Refreshes the vendored MCP JSON schemas (schemas/mcp/<version>/schema.json) and the spec's per-type
// examples (test/fixtures/mcp-examples/<version>/), from GitHub raw URLs at a ref or from a local clone.
//   node scripts/refresh-mcp-schemas.mjs --ref <commit|tag|branch>      # GitHub raw (schemas only)
//   node scripts/refresh-mcp-schemas.mjs --clone <git-dir> [--ref REF]  # a local clone (schemas + examples)
// Then update the commit and date in schemas/mcp/README.md and run the check tests.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];
const REPO = 'modelcontextprotocol/modelcontextprotocol';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function arg(name) {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const clone = arg('--clone');
const ref = arg('--ref') ?? (clone ? 'HEAD' : undefined);
if (!ref) {
  console.error('usage: refresh-mcp-schemas.mjs --ref REF | --clone GIT_DIR [--ref REF]');
  process.exit(2);
}

const git = (...args) => execFileSync('git', ['--git-dir', clone, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });

async function readSpecFile(path) {
  if (clone) return git('show', `${ref}:${path}`);
  const url = `https://raw.githubusercontent.com/${REPO}/${ref}/${path}`;
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

function write(path, text) {
  JSON.parse(text); // refuse anything that is not JSON
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text.endsWith('\n') ? text : `${text}\n`);
}

for (const v of VERSIONS) {
  write(join(root, 'schemas', 'mcp', v, 'schema.json'), await readSpecFile(`schema/${v}/schema.json`));
  console.log(`schemas/mcp/${v}/schema.json`);
}
if (clone) {
  const commit = git('rev-parse', ref).trim();
  for (const v of VERSIONS) {
    const files = git('ls-tree', '-r', '--name-only', ref, `schema/${v}/examples`).split('\n').filter((f) => f.endsWith('.json'));
    if (files.length === 0) continue;
    const out = join(root, 'test', 'fixtures', 'mcp-examples', v);
    rmSync(out, { recursive: true, force: true });
    for (const f of files) write(join(out, f.slice(`schema/${v}/examples/`.length)), await readSpecFile(f));
    console.log(`test/fixtures/mcp-examples/${v}: ${files.length} examples`);
  }
  console.log(`source commit: ${commit}`);
} else {
  console.log('examples are copied only from a clone (--clone): GitHub raw URLs cannot list a folder');
}
