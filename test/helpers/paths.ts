import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(here, '..', '..');
/** The built CLI; tests run after `npm run build` (npm test does it). */
export const MCPTAP = join(ROOT, 'bin', 'mcptap.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const BIN = join(ROOT, 'node_modules', '.bin');
