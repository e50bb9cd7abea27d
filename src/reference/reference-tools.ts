/**
 * The reference server's tools: each one's behaviour is chosen by its arguments, so tests, the
 * demo and the benchmarks can provoke every outcome mcptap must tell apart (success, slow,
 * streamed progress, tool error, JSON-RPC error, big payload, cancelled or not).
 *
 * Transport-neutral: the MCP wiring lives in reference-mcp-server.ts. Invalid arguments are a
 * tool-level failure (`isError: true`, per the 2025-11-25 rule that input validation errors are
 * tool execution errors); only `rpc-error` and unknown tool names produce JSON-RPC errors.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { ErrorCodes } from '../protocol/error-codes.js';
import { TRIGGER_METHODS, type Fired, type TriggerKind } from './notification-hub.js';

/** What a running tool may use; built per call by the MCP adapter. */
export interface ToolRunContext {
  /** Aborted when the call is cancelled AND it honours cancellation; otherwise never aborts. */
  signal: AbortSignal;
  /** Sends `notifications/progress` when the request carried a progressToken; otherwise a no-op. */
  progress(progress: number, total: number, message: string): Promise<void>;
  /** True once a cancellation arrived that this call chose to ignore. */
  cancelIgnored(): boolean;
  /** This call's entry in the work tracker: one `unit()` per piece of work done. */
  work: { unit(): void };
  /** The `in-flight` tool's answer: one call's work (by progress token), or all running work. */
  inFlight(progressToken: string | undefined): Record<string, unknown>;
  /** The `trigger` tool's action: send one notification to every listener. */
  trigger(kind: TriggerKind, uri: string): Promise<Fired>;
}

/** A tool-level failure (bad arguments): reported as `isError: true`, never as a JSON-RPC error. */
export class ToolInputError extends Error {}

export const MAX_DELAY_MS = 600_000;
export const MAX_PROGRESS_STEPS = 10_000;
export const MAX_PAYLOAD_KB = 65_536;
export const MAX_TRIGGER_COUNT = 10_000;
/** The tools whose work is tracked (and that may honour or ignore cancellation). */
export const WORK_TOOLS: ReadonlySet<string> = new Set(['delay', 'progress']);

const HONOR_CANCEL = {
  type: 'boolean',
  description: 'Stop when the request is cancelled (notifications/cancelled, or the 2026-07-28 HTTP stream closing). Default: the server option (true).',
};

function tool(name: string, description: string, properties: Record<string, object>, required: string[] = []): Tool {
  return { name, description, inputSchema: { type: 'object', properties, required } } as Tool;
}

/** The `tools/list` entries, in a stable order. */
export const REFERENCE_TOOLS: readonly Tool[] = [
  tool('echo', 'Answers with a text content equal to `text`.', { text: { type: 'string' } }, ['text']),
  tool('delay', 'Waits `ms` milliseconds, then answers.', {
    ms: { type: 'integer', minimum: 0, maximum: MAX_DELAY_MS },
    honorCancel: HONOR_CANCEL,
  }),
  tool('progress', 'Sends notifications/progress every `intervalMs` for `steps` steps (when the request has a progressToken), then answers.', {
    steps: { type: 'integer', minimum: 0, maximum: MAX_PROGRESS_STEPS },
    intervalMs: { type: 'integer', minimum: 0, maximum: MAX_DELAY_MS },
    honorCancel: HONOR_CANCEL,
  }),
  tool('fail', 'Answers with a tool error (isError: true).', { message: { type: 'string' } }),
  tool('rpc-error', 'Answers with a JSON-RPC error response; the caller picks code, message and data.', {
    code: { type: 'integer', description: 'JSON-RPC error code (default -32603).' },
    message: { type: 'string' },
    data: { description: 'Optional error data, passed through.' },
  }),
  tool('payload', 'Answers with one text content of exactly `kb` KiB (ASCII).', {
    kb: { type: 'number', minimum: 0, maximum: MAX_PAYLOAD_KB },
  }),
  tool('clock', 'Answers with the current time (ISO-8601), as text: an answer that differs on every call.', {}),
  tool(
    'in-flight',
    'Reports tool work in flight. With `progressToken`: the work of the call that carried that _meta.progressToken (running, last work, end, cancel seen, work after the cancel). Without: every running call.',
    { progressToken: { type: ['string', 'integer'] } },
  ),
  tool(
    'trigger',
    'Sends `count` notifications of kind `notification` (tools, prompts, resources: list_changed; resource: resources/updated for `uri`) every `intervalMs`, the first after `delayMs`, to every listener (subscriptions/listen streams, legacy GET streams, the stdio connection), each stamped with _meta["io.mcptap/firedAtUs"]; answers with the stamps.',
    {
      notification: { type: 'string', enum: Object.keys(TRIGGER_METHODS) },
      uri: { type: 'string' },
      count: { type: 'integer', minimum: 1, maximum: MAX_TRIGGER_COUNT },
      intervalMs: { type: 'integer', minimum: 0, maximum: MAX_DELAY_MS },
      delayMs: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_DELAY_MS,
        description: 'Wait before the first (default 0): lets listeners that share the caller open first.',
      },
    },
  ),
];

const TOOL_NAMES = new Set(REFERENCE_TOOLS.map((t) => t.name));

export function isReferenceTool(name: string): boolean {
  return TOOL_NAMES.has(name);
}

/** Whether this call stops on cancellation: its `honorCancel` argument, else the server default. */
export function honorsCancel(args: Record<string, unknown>, serverDefault: boolean): boolean {
  return typeof args.honorCancel === 'boolean' ? args.honorCancel : serverDefault;
}

/** Runs one tool. Throws ProtocolError for `rpc-error`, ToolInputError for bad arguments. */
export async function runReferenceTool(name: string, args: Record<string, unknown>, ctx: ToolRunContext): Promise<CallToolResult> {
  switch (name) {
    case 'echo':
      return text(str(args, 'text', undefined));
    case 'delay':
      return runDelay(args, ctx);
    case 'progress':
      return runProgress(args, ctx);
    case 'fail':
      return { content: [{ type: 'text', text: str(args, 'message', 'reference tool failure') }], isError: true };
    case 'rpc-error':
      throw rpcError(args);
    case 'payload':
      return text(payloadText(num(args, 'kb', 1, MAX_PAYLOAD_KB)));
    case 'clock':
      return text(`now: ${new Date().toISOString()}`);
    case 'in-flight':
      return structured(ctx.inFlight(args.progressToken === undefined ? undefined : tokenArg(args.progressToken)));
    case 'trigger':
      return runTrigger(args, ctx);
    default:
      throw new ProtocolError(ErrorCodes.InvalidParams, `Tool ${name} not found`);
  }
}

async function runDelay(args: Record<string, unknown>, ctx: ToolRunContext): Promise<CallToolResult> {
  const ms = int(args, 'ms', 0, MAX_DELAY_MS);
  await sleep(ms, undefined, { signal: ctx.signal });
  ctx.work.unit();
  return text(`delayed ${ms} ms${ctx.cancelIgnored() ? ' (cancellation ignored)' : ''}`);
}

async function runProgress(args: Record<string, unknown>, ctx: ToolRunContext): Promise<CallToolResult> {
  const steps = int(args, 'steps', 5, MAX_PROGRESS_STEPS);
  const intervalMs = int(args, 'intervalMs', 100, MAX_DELAY_MS);
  for (let i = 1; i <= steps; i++) {
    await sleep(intervalMs, undefined, { signal: ctx.signal });
    ctx.work.unit();
    await ctx.progress(i, steps, `step ${i}/${steps}`);
  }
  return text(`progress: ${steps} steps every ${intervalMs} ms${ctx.cancelIgnored() ? ' (cancellation ignored)' : ''}`);
}

async function runTrigger(args: Record<string, unknown>, ctx: ToolRunContext): Promise<CallToolResult> {
  const kind = str(args, 'notification', 'tools');
  if (!(kind in TRIGGER_METHODS)) throw new ToolInputError(`notification must be one of ${Object.keys(TRIGGER_METHODS).join(', ')}`);
  const uri = str(args, 'uri', 'mcptap://reference/info');
  const count = int(args, 'count', 1, MAX_TRIGGER_COUNT);
  const intervalMs = int(args, 'intervalMs', 0, MAX_DELAY_MS);
  const delayMs = int(args, 'delayMs', 0, MAX_DELAY_MS);
  const fired: Fired[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 0 || delayMs > 0) await sleep(i > 0 ? intervalMs : delayMs, undefined, { signal: ctx.signal });
    fired.push(await ctx.trigger(kind as TriggerKind, uri));
  }
  return structured({ method: TRIGGER_METHODS[kind as TriggerKind], fired });
}

function tokenArg(v: unknown): string {
  if (typeof v !== 'string' && !(typeof v === 'number' && Number.isInteger(v))) throw new ToolInputError('progressToken must be a string or an integer');
  return String(v);
}

function structured(o: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(o) }], structuredContent: o };
}

function rpcError(args: Record<string, unknown>): ProtocolError {
  const code = args.code === undefined ? ErrorCodes.InternalError : args.code;
  if (typeof code !== 'number' || !Number.isSafeInteger(code)) throw new ToolInputError('code must be an integer');
  return new ProtocolError(code, str(args, 'message', 'reference rpc-error'), args.data);
}

const PATTERN = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/';

/** Exactly `kb` KiB of ASCII (so bytes == characters on the wire, before JSON framing). */
export function payloadText(kb: number): string {
  const bytes = Math.round(kb * 1024);
  return PATTERN.repeat(Math.ceil(bytes / PATTERN.length)).slice(0, bytes);
}

function text(t: string): CallToolResult {
  return { content: [{ type: 'text', text: t }] };
}

function str(args: Record<string, unknown>, key: string, fallback: string | undefined): string {
  const v = args[key] ?? fallback;
  if (typeof v !== 'string') throw new ToolInputError(`${key} must be a string`);
  return v;
}

function num(args: Record<string, unknown>, key: string, fallback: number, max: number): number {
  const v = args[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > max) {
    throw new ToolInputError(`${key} must be a number between 0 and ${max}`);
  }
  return v;
}

function int(args: Record<string, unknown>, key: string, fallback: number, max: number): number {
  const v = num(args, key, fallback, max);
  if (!Number.isInteger(v)) throw new ToolInputError(`${key} must be an integer`);
  return v;
}
