/**
 * What a replay sends in place of the recorded values, and how answers come back into the
 * recording's terms. The JSON-RPC id and the progress token are the recorded ones where the caller
 * says they are free (not in flight in the replay connection: a server that echoes them then answers
 * as recorded), fresh ones otherwise; the MRTR `requestState` and subscription ids are the new
 * server's, learnt from its answers, never the recorded ones. Pure data in, data out.
 */
import { idKey, isRecord, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from '../model/jsonrpc.js';
import { progressTokenOf } from '../protocol/mcp.js';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

export interface Outgoing {
  request: JsonRpcRequest;
  progressToken?: JsonRpcId;
}

/** Ids and states remembered for the latest this many requests (a cancel or retry follows its request closely). */
export const REMEMBERED = 65_536;

/** Sets and keeps only the `max` latest keys (a Map iterates in insertion order). */
function remember<V>(m: Map<string, V>, key: string, v: V, max = REMEMBERED): void {
  m.delete(key);
  m.set(key, v);
  if (m.size > max) m.delete(m.keys().next().value!);
}

export class ReplayRemap {
  private tokens = 0;
  /** Recorded `requestState` -> the new server's. */
  private readonly states = new Map<string, string>();
  /** Recorded request id -> the id it was replayed with, for the latest requests. */
  private readonly ids = new Map<string, JsonRpcId>();
  /** The same for `subscriptions/listen` requests, all of them (subscriptions are named by their listen request's id and live long). */
  private readonly listens = new Map<string, JsonRpcId>();

  /**
   * The request to send for a recorded one, with `id`; its progress token the recorded one when
   * `tokenFree` says no request in flight in the connection carries it, else a fresh one.
   */
  outgoing(recorded: JsonRpcRequest, id: JsonRpcId, tokenFree: (token: JsonRpcId) => boolean = () => false): Outgoing {
    const out: Outgoing = { request: { ...recorded, id } };
    if (recorded.method === 'subscriptions/listen') this.listens.set(idKey(recorded.id), id);
    else remember(this.ids, idKey(recorded.id), id);
    const params = recorded.params;
    if (!isRecord(params)) return out;
    const p: Record<string, unknown> = { ...params };
    const recordedToken = progressTokenOf(recorded);
    if (recordedToken !== undefined && isRecord(p._meta)) {
      const token = tokenFree(recordedToken) ? recordedToken : `mcptap-replay-${++this.tokens}`;
      p._meta = { ...p._meta, progressToken: token };
      out.progressToken = token;
    }
    if (typeof p.requestState === 'string') p.requestState = this.states.get(p.requestState) ?? p.requestState;
    // Cancelling a recorded request means cancelling its replay.
    if (recorded.method === 'notifications/cancelled' && (typeof p.requestId === 'string' || typeof p.requestId === 'number')) {
      const key = idKey(p.requestId);
      p.requestId = this.ids.get(key) ?? this.listens.get(key) ?? p.requestId;
    }
    out.request.params = p;
    return out;
  }

  /**
   * The new server's answer in the recording's terms: the recorded id, the recorded `requestState`
   * (learning the new one for the retries that follow) and subscription ids.
   */
  back(replayed: JsonRpcMessage, recordedRequest: JsonRpcRequest, recordedResponse: JsonRpcMessage | undefined, sentId: JsonRpcId): JsonRpcMessage {
    const out: Record<string, unknown> = { ...replayed, id: recordedRequest.id };
    const result = out.result;
    if (!isRecord(result)) return out as unknown as JsonRpcMessage;
    const r: Record<string, unknown> = { ...result };
    const recordedState = isRecord(recordedResponse) && isRecord(recordedResponse.result) ? recordedResponse.result.requestState : undefined;
    if (typeof r.requestState === 'string' && typeof recordedState === 'string') {
      remember(this.states, recordedState, r.requestState);
      r.requestState = recordedState;
    }
    if (isRecord(r._meta) && r._meta[SUBSCRIPTION_ID] === sentId) r._meta = { ...r._meta, [SUBSCRIPTION_ID]: recordedRequest.id };
    out.result = r;
    return out as unknown as JsonRpcMessage;
  }
}
