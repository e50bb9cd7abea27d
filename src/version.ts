import { readFileSync } from 'node:fs';

/** mcptap's version, read from package.json (recorded with every recording). */
export const VERSION: string = (() => {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      /* try the next layout (src/ vs dist/src/) */
    }
  }
  return '0.0.0';
})();
