// Entry of the recording indexer process when mcptap runs from its TypeScript sources (vitest, tsx):
// registers tsx in this thread, then loads indexer-process.ts. The compiled build (dist/) starts
// indexer-process.js directly and never uses this file.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./indexer-process.ts', import.meta.url).href);
