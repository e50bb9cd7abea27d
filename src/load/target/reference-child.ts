/**
 * Child-process entry that serves mcptap's reference server for a load run, so the target does not
 * share the load generator's event loop (or its CPU core).
 *
 *   node reference-child.js http  [--ignore-cancel] [EVERY_MS FOR_MS]   prints {"url", "startedAtEpochMs"}
 *                                     on stdout, stops when its stdin ends (the parent went away)
 *   node reference-child.js stdio [--ignore-cancel] [EVERY_MS FOR_MS]   serves MCP on stdin/stdout
 */
import { runReferenceStdio, startReferenceHttpServer } from '../../reference/reference-server.js';

const [mode, ...rest] = process.argv.slice(2);
const ignoreCancel = rest[0] === '--ignore-cancel';
const [every, forMs] = ignoreCancel ? rest.slice(1) : rest;
const stall = every && forMs ? { everyMs: Number(every), forMs: Number(forMs) } : undefined;
const common = { stall, ...(ignoreCancel ? { honorCancel: false } : {}) };

if (mode === 'stdio') {
  const handle = await runReferenceStdio(common);
  await handle.closed;
  process.exit(0);
} else {
  const server = await startReferenceHttpServer({ port: 0, ...common });
  process.stdout.write(JSON.stringify({ url: server.url, startedAtEpochMs: server.startedAtEpochMs }) + '\n');
  process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
  process.stdin.resume();
}
