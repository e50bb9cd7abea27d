// Entry of the pipeline thread when mcptap runs from its TypeScript sources (vitest, tsx):
// registers tsx in this thread, then loads pipeline-thread-entry.ts. The compiled build (dist/) starts
// pipeline-thread-entry.js directly and never uses this file.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./pipeline-thread-entry.ts', import.meta.url).href);
