// Entry of the recorder's writer thread when mcptap runs from its TypeScript sources (vitest, tsx):
// registers tsx in this thread, then loads recorder-worker.ts. The compiled build (dist/) starts
// recorder-worker.js directly and never uses this file.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./recorder-worker.ts', import.meta.url).href);
