/**
 * mcptap's own MCP server: the embedded default target of the demo, the tests and the
 * benchmarks. Both protocol eras on the same endpoint, over stdio and Streamable HTTP, built on
 * the official SDK 2.x (`@modelcontextprotocol/server` + `@modelcontextprotocol/node`).
 *
 * This file is the public face of src/reference/; the parts live one concern per file:
 * - reference-tools.ts        the tools and what their arguments make them do
 * - reference-mcp-server.ts   the MCP surface (tools, resource, prompt) and cancellation policy
 * - reference-stdio.ts        stdio serving (`runReferenceStdio`)
 * - reference-http-server.ts  HTTP serving (`startReferenceHttpServer`), era dispatch
 * - node-fetch-adapter.ts     Node request/response <-> the SDK's fetch face, the body read once
 * - legacy-session-handler.ts stateful 2025-era sessions over HTTP
 * - stall-schedule.ts, stalled-response.ts  the stall option
 * - work-tracker.ts           tool work in flight (the `in-flight` tool)
 * - notification-hub.ts       where the `trigger` tool's notifications go
 */
export { runReferenceStdio, type ReferenceStdioOptions, type ReferenceStdioHandle } from './reference-stdio.js';
export { startReferenceHttpServer, type ReferenceHttpServerOptions, type ReferenceHttpServer } from './reference-http-server.js';
export type { ReferenceServerOptions } from './reference-options.js';
export {
  REFERENCE_SERVER_NAME,
  REFERENCE_INFO_URI,
  REFERENCE_PROMPT,
  PROGRESS_STARTED_META,
  PROGRESS_SENT_META,
  PROGRESS_ARRIVED_META,
  ReferenceMcpServer,
  createReferenceServerFactory,
  type ReferenceBehaviour,
} from './reference-mcp-server.js';
export { resolveReference } from './reference-options.js';
export { REFERENCE_TOOLS, MAX_DELAY_MS, MAX_PAYLOAD_KB, MAX_PROGRESS_STEPS, payloadText } from './reference-tools.js';
export { WorkTracker, describeWork, type WorkStatus } from './work-tracker.js';
export { NotificationHub, TRIGGER_METHODS, type TriggerKind } from './notification-hub.js';
export { StallSchedule, stallDelayMs, parseStallSpec, type StallOptions } from './stall-schedule.js';
