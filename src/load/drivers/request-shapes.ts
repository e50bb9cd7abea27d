/**
 * The bytes of a load request, built once per step where they can be: a step whose arguments have
 * no placeholder hands the driver the same {@link PreparedCall} every iteration (`fixed`), and its
 * JSON text is kept as the text before and after the id, its HTTP headers as a flat name/value
 * list. A request is then two string concatenations. Other calls are built as before, per request.
 * The text is exactly `JSON.stringify(session.build(...))`: the server sees the same bytes.
 */
import type { McpSession } from '../../client/mcp-session.js';
import { applyHeaderOverrides, mcpHeaders } from '../../client/mcp-request.js';
import { isRecord, type JsonRpcId } from '../../model/jsonrpc.js';
import { progressTokenOf } from '../../protocol/mcp.js';
import type { PreparedCall } from './driver.js';

/** Stands for the id while the text is built; then the text is cut around it. */
const ID_MARK = '\u0000mcptap-id\u0000';
const QUOTED_MARK = JSON.stringify(ID_MARK);

interface Shape {
  before: string;
  after: string;
  /** HTTP: every header of the request, flat (name, value, …), base headers included. */
  headers: string[] | undefined;
  /** Legacy HTTP: the session id the headers were built for. */
  sid: string | undefined;
  progressToken: JsonRpcId | undefined;
}

export interface BuiltRequest {
  text: string;
  /** HTTP only. */
  headers: string[] | undefined;
  progressToken: JsonRpcId | undefined;
}

export class RequestShapes {
  private readonly fixed = new WeakMap<PreparedCall, Shape>();

  /** `baseHeaders`: the HTTP client's own headers (undefined on stdio, which has none). */
  constructor(private readonly baseHeaders: Readonly<Record<string, string>> | undefined) {}

  /** The request for call `c` with `id` on `session` (its era, version and session id). */
  build(session: McpSession, c: PreparedCall, id: number): BuiltRequest {
    if (c.fixed && !c.progress) {
      let s = this.fixed.get(c);
      if (!s || s.sid !== session.sessionId) this.fixed.set(c, (s = this.shape(session, c)));
      return { text: s.before + id + s.after, headers: s.headers, progressToken: s.progressToken };
    }
    let params = c.params;
    if (c.progress) {
      const meta = isRecord(params?._meta) ? params!._meta : {};
      params = { ...(params ?? {}), _meta: { ...meta, progressToken: `p-${String(id)}` } };
    }
    const req = session.build(c.method, params, id);
    return { text: JSON.stringify(req), headers: this.headers(session, c.method, req.params, c), progressToken: progressTokenOf(req) };
  }

  private shape(session: McpSession, c: PreparedCall): Shape {
    const req = session.build(c.method, c.params, ID_MARK);
    const text = JSON.stringify(req);
    const at = text.indexOf(QUOTED_MARK);
    return {
      before: text.slice(0, at),
      after: text.slice(at + QUOTED_MARK.length),
      headers: this.headers(session, c.method, req.params, c),
      sid: session.sessionId,
      progressToken: progressTokenOf(req),
    };
  }

  private headers(session: McpSession, method: string, params: unknown, c: PreparedCall): string[] | undefined {
    if (!this.baseHeaders) return undefined;
    const own = applyHeaderOverrides(mcpHeaders(method, params, session.headerContext), c.headers);
    const all: Record<string, string> = {};
    for (const k in this.baseHeaders) all[k] = this.baseHeaders[k]!;
    for (const k in own) all[k] = own[k]!;
    const flat: string[] = [];
    for (const k in all) flat.push(k, all[k]!);
    return flat;
  }
}
