// Entry of the pipeline worker thread when mcptap runs from its TypeScript sources (vitest, tsx):
// registers tsx in this thread, then loads pipeline-worker.ts. The compiled build (dist/) starts
// pipeline-worker.js directly and never uses this file.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./pipeline-worker.ts', import.meta.url).href);
