/**
 * The reference server's MCP surface on the official SDK 2.x low-level `Server`: tools (see
 * reference-tools.ts), one resource and one prompt, served to both protocol eras from ONE
 * factory (the SDK's serving entries pick the era per connection or per request).
 *
 * Why the low-level `Server` and not `McpServer`: `McpServer` turns every error a tool throws
 * into an `isError` result, so `rpc-error` could not answer with a JSON-RPC error of the
 * caller's choosing. Here a thrown `ProtocolError` becomes the JSON-RPC error verbatim.
 *
 * Cancellation policy: the SDK aborts a handler and then drops its response when
 * `notifications/cancelled` arrives. A call that does not honour cancellation registers its id
 * in {@link ReferenceMcpServer}, which swallows the matching cancel so the call runs to the end
 * and its response is still sent. Closing a 2026-07-28 HTTP stream (the other way to cancel)
 * closes the per-request transport: a non-honouring call still runs to the end, but its
 * response has nowhere to go and is dropped by the SDK (logged).
 */
import {
  Server,
  ProtocolError,
  type CallToolResult,
  type JSONRPCNotification,
  type McpServerFactory,
  type MessageExtraInfo,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { isRecord } from '../model/jsonrpc.js';
import { ErrorCodes } from '../protocol/error-codes.js';
import type { Logger } from '../util/logger.js';
import { VERSION } from '../version.js';
import { REFERENCE_TOOLS, ToolInputError, WORK_TOOLS, honorsCancel, isReferenceTool, runReferenceTool, type ToolRunContext } from './reference-tools.js';
import type { StallOptions } from './stall-schedule.js';
import type { NotificationHub } from './notification-hub.js';
import { describeWork, type WorkTracker } from './work-tracker.js';

export const REFERENCE_SERVER_NAME = 'mcptap-reference';
export const REFERENCE_INFO_URI = 'mcptap://reference/info';
export const REFERENCE_PROMPT = 'greet';
/** On each progress notification of a reference tool: when the tool call started, epoch µs. */
export const PROGRESS_STARTED_META = 'io.mcptap/startedAtUs';
/** On each progress notification of a reference tool: when the server sent it, epoch µs. */
export const PROGRESS_SENT_META = 'io.mcptap/sentAtUs';
/** On each progress notification of a reference tool over HTTP: when the HTTP request arrived, epoch µs. */
export const PROGRESS_ARRIVED_META = 'io.mcptap/arrivedAtUs';
/** Request header the HTTP server sets on arrival (epoch µs) for {@link PROGRESS_ARRIVED_META}; a client's own is overwritten. */
export const ARRIVED_HEADER = 'x-mcptap-arrived-us';

export interface ReferenceBehaviour {
  /** Default for the tools' `honorCancel` argument (default true). */
  honorCancel: boolean;
  logger: Logger;
  /** Shown by the info resource, so a client can see what it is talking to. */
  transport: 'stdio' | 'http';
  stall?: StallOptions;
  startedAtEpochMs: number;
  /** Tool work in flight, shared by every instance this behaviour serves (the `in-flight` tool). */
  work: WorkTracker;
  /** Where the `trigger` tool's notifications go. */
  hub: NotificationHub;
  /** Epoch µs, for the stamps on progress notifications. */
  nowUs: () => number;
}

type RequestId = string | number;

/** `Server` that can let chosen in-flight requests ignore `notifications/cancelled`. */
export class ReferenceMcpServer extends Server {
  /** In-flight requests ignoring cancellation -> whether a cancel was swallowed. Ids verbatim. */
  private readonly ignoring = new Map<RequestId, { cancelled: boolean; onCancel: () => void }>();
  /** Tool calls running on this instance (one may outlive its exchange: a call ignoring a closed stream). */
  toolCalls = 0;

  constructor(private readonly log: Logger) {
    super(
      { name: REFERENCE_SERVER_NAME, version: VERSION },
      {
        // listChanged/subscribe: the `trigger` tool sends these notifications on demand.
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true }, prompts: { listChanged: true } },
        instructions: `mcptap reference server. Tools: ${REFERENCE_TOOLS.map((t) => t.name).join(', ')}.`,
      },
    );
  }

  /** Until `release()`, cancels for `id` are swallowed (and remembered for `cancelled()`). */
  ignoreCancellation(id: RequestId, onCancel: () => void = () => undefined): { cancelled(): boolean; release(): void } {
    const entry = { cancelled: false, onCancel };
    this.ignoring.set(id, entry);
    return { cancelled: () => entry.cancelled, release: () => this.ignoring.delete(id) };
  }

  protected override _onnotification(raw: JSONRPCNotification, extra?: MessageExtraInfo): void {
    if (raw.method === 'notifications/cancelled' && isRecord(raw.params)) {
      const id = raw.params.requestId;
      const entry = typeof id === 'string' || typeof id === 'number' ? this.ignoring.get(id) : undefined;
      if (entry) {
        entry.cancelled = true;
        entry.onCancel();
        this.log.debug(`reference: ignoring notifications/cancelled for request ${JSON.stringify(id)}`);
        return;
      }
    }
    super._onnotification(raw, extra);
  }
}

/** Idle per-request instances kept for reuse, at most this many. */
const MAX_IDLE_INSTANCES = 64;

/**
 * The one factory both eras and both transports are served from. A 2026-07-28 HTTP request gets an
 * instance whose previous exchange is over: the SDK connects it to that request's transport alone
 * and tears it down after, so building the same handlers anew for every request bought nothing.
 * An instance goes back to the pool only when its exchange closed with no tool call still running
 * on it; anything else (a legacy session, a stdio connection) gets an instance of its own.
 */
export function createReferenceServerFactory(behaviour: ReferenceBehaviour): McpServerFactory {
  if (behaviour.transport === 'stdio') return (ctx) => buildReferenceServer(behaviour, ctx.era);
  const idle: ReferenceMcpServer[] = [];
  const pooled = (): ReferenceMcpServer => {
    const server = buildReferenceServer(behaviour, 'modern');
    server.onclose = () => {
      if (server.toolCalls === 0 && server.transport === undefined && idle.length < MAX_IDLE_INSTANCES) idle.push(server);
    };
    return server;
  };
  return (ctx) => (ctx.era === 'legacy' ? buildReferenceServer(behaviour, 'legacy') : (idle.pop() ?? pooled()));
}

export function buildReferenceServer(behaviour: ReferenceBehaviour, era: 'legacy' | 'modern'): ReferenceMcpServer {
  const server = new ReferenceMcpServer(behaviour.logger);
  // Long-lived instances (a legacy session, a stdio connection) receive the trigger's notifications.
  if (era === 'legacy' || behaviour.transport === 'stdio') {
    const remove = behaviour.hub.add({ notification: (n) => (server.transport ? server.notification(n) : Promise.resolve()) });
    const previous = server.onclose;
    server.onclose = () => {
      remove();
      previous?.();
    };
  }
  server.setRequestHandler('resources/subscribe', () => ({}));
  server.setRequestHandler('resources/unsubscribe', () => ({}));
  server.setRequestHandler('tools/list', () => ({ tools: [...REFERENCE_TOOLS] }));
  server.setRequestHandler('tools/call', (req, ctx) =>
    callTool(server, behaviour, req.params.name, isRecord(req.params.arguments) ? req.params.arguments : {}, ctx),
  );
  server.setRequestHandler('resources/list', () => ({
    resources: [{ uri: REFERENCE_INFO_URI, name: 'info', mimeType: 'application/json', description: 'What this server is and how it was started.' }],
  }));
  server.setRequestHandler('resources/read', (req) => {
    if (req.params.uri !== REFERENCE_INFO_URI) {
      throw new ProtocolError(ErrorCodes.ResourceNotFound, `Resource ${req.params.uri} not found`, { uri: req.params.uri });
    }
    return { contents: [{ uri: REFERENCE_INFO_URI, mimeType: 'application/json', text: JSON.stringify(infoOf(behaviour, era)) }] };
  });
  server.setRequestHandler('prompts/list', () => ({
    prompts: [{ name: REFERENCE_PROMPT, description: 'Greets `name`.', arguments: [{ name: 'name', required: true }] }],
  }));
  server.setRequestHandler('prompts/get', (req) => {
    if (req.params.name !== REFERENCE_PROMPT) throw new ProtocolError(ErrorCodes.InvalidParams, `Prompt ${req.params.name} not found`);
    const name = req.params.arguments?.name;
    if (typeof name !== 'string') throw new ProtocolError(ErrorCodes.InvalidParams, 'Prompt greet needs argument `name`');
    return { description: 'A greeting', messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }] };
  });
  return server;
}

function infoOf(b: ReferenceBehaviour, era: 'legacy' | 'modern'): Record<string, unknown> {
  return {
    name: REFERENCE_SERVER_NAME,
    version: VERSION,
    era,
    transport: b.transport,
    tools: REFERENCE_TOOLS.map((t) => t.name),
    honorCancelDefault: b.honorCancel,
    stall: b.stall ?? null,
    startedAt: new Date(b.startedAtEpochMs).toISOString(),
  };
}

async function callTool(
  server: ReferenceMcpServer,
  b: ReferenceBehaviour,
  name: string,
  args: Record<string, unknown>,
  ctx: ServerContext,
): Promise<CallToolResult> {
  if (!isReferenceTool(name)) throw new ProtocolError(ErrorCodes.InvalidParams, `Tool ${name} not found`);
  server.toolCalls++;
  const startedAtUs = b.nowUs();
  const honor = honorsCancel(args, b.honorCancel);
  const token = ctx.mcpReq._meta?.progressToken;
  const work = WORK_TOOLS.has(name) ? b.work.begin(name, token === undefined ? undefined : String(token), honor) : undefined;
  const ignore = honor ? undefined : server.ignoreCancellation(ctx.mcpReq.id, () => work?.cancelSeen());
  // A closed 2026-07-28 stream aborts the SDK's signal whatever the call does about it.
  ctx.mcpReq.signal.addEventListener('abort', () => work?.cancelSeen(), { once: true });
  const runCtx: ToolRunContext = {
    signal: honor ? ctx.mcpReq.signal : new AbortController().signal,
    progress: progressSender(ctx, b, startedAtUs, arrivedAtUs(ctx)),
    cancelIgnored: () => (ignore?.cancelled() ?? false) || (!honor && ctx.mcpReq.signal.aborted),
    work: work ?? { unit: () => undefined },
    inFlight: (key) => inFlightReport(b.work, key),
    trigger: (kind, uri) => b.hub.fire(kind, uri),
  };
  let outcome: 'completed' | 'stopped' = 'completed';
  try {
    return await runReferenceTool(name, args, runCtx);
  } catch (err) {
    if (honor && ctx.mcpReq.signal.aborted) outcome = 'stopped';
    if (err instanceof ToolInputError) {
      return { content: [{ type: 'text', text: `invalid arguments for ${name}: ${err.message}` }], isError: true };
    }
    throw err;
  } finally {
    server.toolCalls--;
    work?.end(outcome);
    ignore?.release();
    if (honor && ctx.mcpReq.signal.aborted) {
      b.logger.debug(`reference: ${name} (request ${JSON.stringify(ctx.mcpReq.id)}) stopped: cancelled`);
      endResponseStream(server, ctx.mcpReq.id);
    }
    if (!honor && ctx.mcpReq.signal.aborted) {
      b.logger.debug(`reference: ${name} (request ${JSON.stringify(ctx.mcpReq.id)}) ran on after its stream closed; the SDK drops the response`);
    }
  }
}

function inFlightReport(work: WorkTracker, key: string | undefined): Record<string, unknown> {
  const now = Date.now();
  if (key === undefined) return { inFlight: work.inFlight, running: work.list().map((w) => describeWork(w, now)) };
  const w = work.status(key);
  return w ? describeWork(w, now) : { found: false, key, running: false };
}

/**
 * A cancelled legacy HTTP request gets no response, and the SDK's sessionful transport would then
 * keep that POST's SSE stream open until the session ends; end it instead (no-op elsewhere).
 */
function endResponseStream(server: ReferenceMcpServer, id: RequestId): void {
  const transport = server.transport as { closeSSEStream?: (id: RequestId) => void } | undefined;
  transport?.closeSSEStream?.(id);
}

/** When the HTTP request arrived (the server's stamp, {@link ARRIVED_HEADER}); undefined on stdio. */
function arrivedAtUs(ctx: ServerContext): number | undefined {
  const v = Number(ctx.http?.req?.headers.get(ARRIVED_HEADER) ?? NaN);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * Progress goes out only when the request asked for it; a failed send never fails the tool. Each
 * carries when the tool started and when it was sent (epoch µs), so a client can tell its own
 * timing error from the server's timer lateness ({@link PROGRESS_STARTED_META}).
 */
function progressSender(ctx: ServerContext, b: ReferenceBehaviour, startedAtUs: number, arrivedUs: number | undefined): ToolRunContext['progress'] {
  const token = ctx.mcpReq._meta?.progressToken;
  return async (progress, total, message) => {
    if (token === undefined) return;
    try {
      const _meta: Record<string, number> = { [PROGRESS_STARTED_META]: startedAtUs, [PROGRESS_SENT_META]: b.nowUs() };
      if (arrivedUs !== undefined) _meta[PROGRESS_ARRIVED_META] = arrivedUs;
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total, message, _meta } });
    } catch (err) {
      b.logger.debug(`reference: progress notification not sent: ${(err as Error).message}`);
    }
  };
}
