#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`, `npm start` and `npm test`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write('mcptap: not built yet. Run `npm run build` in the mcptap checkout first.\n');
  process.exit(70);
}
await import(main.href);
