/**
 * What the mock serves, read once from a recording: every answered client-to-server request with
 * the notifications the server sent for it (progress, and on HTTP every event of its SSE stream)
 * and the response, each timed from the request.
 */
import type { Era } from '../model/exchange.js';
import type { JsonRpcNotification, JsonRpcResponse } from '../model/jsonrpc.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { StoredExchange } from '../store/types.js';
import { McptapError } from '../errors.js';

export interface RecordedMessage<M> {
  /** Microseconds after the request was seen. */
  afterUs: number;
  message: M;
}

export interface RecordedAnswer {
  /** The exchange in the recording (`show --exchange KEY`). */
  exchangeKey: string;
  method: string;
  params?: unknown;
  era: Era;
  notifications: RecordedMessage<JsonRpcNotification>[];
  response: RecordedMessage<JsonRpcResponse>;
  /** The response came as an SSE event (HTTP); a plain JSON body otherwise. */
  overSse: boolean;
}

export interface RecordedAnswers {
  answers: RecordedAnswer[];
  /** Exchanges left out: still in flight, cancelled or unanswered when the recording ended. */
  unanswered: number;
}

/**
 * Reads the answered client requests of the given recordings (each in start order, the recordings
 * in the order given). MOCK_NO_EXCHANGES when there are none.
 */
export function readRecordedAnswers(store: RecordingStore, recordingIds: readonly number[], label: string): RecordedAnswers {
  const answers: RecordedAnswer[] = [];
  let unanswered = 0;
  const exchanges = recordingIds.flatMap((recordingId) => store.exchanges({ recordingId }));
  for (const ex of exchanges) {
    if (ex.direction !== 'c2s') continue;
    if (ex.response === undefined || ex.state !== 'completed') {
      unanswered++;
      continue;
    }
    answers.push(answerOf(ex, store));
  }
  if (answers.length === 0) {
    throw new McptapError(
      'MOCK_NO_EXCHANGES',
      `${label}${recordingIds.length === 1 ? ` (recording ${recordingIds[0]})` : ''} holds no answered requests to serve${unanswered ? ` (${unanswered} never got a response)` : ''}. ` +
        'Record a session first, e.g. mcptap stdio --record FILE -- <server command>, and let the client make some calls.',
    );
  }
  return { answers, unanswered };
}

function answerOf(ex: StoredExchange, store: RecordingStore): RecordedAnswer {
  const frames = store.framesOfExchange(ex.recordingId, ex.key);
  const requestUs = frames.find((f) => f.seq === ex.requestSeq)?.timeUs ?? ex.startUs;
  const after = (t: number) => Math.max(0, t - requestUs);
  const notifications: RecordedMessage<JsonRpcNotification>[] = [];
  let overSse = false;
  let responseUs = ex.endUs ?? requestUs;
  for (const f of frames) {
    if (f.kind !== 'message' || f.direction !== 's2c') continue;
    if (f.messageKind === 'notification') notifications.push({ afterUs: after(f.timeUs), message: f.message as JsonRpcNotification });
    else if (f.seq === ex.responseSeq) ((overSse = f.channel === 'sse'), (responseUs = f.timeUs));
  }
  const params = (ex.request as { params?: unknown }).params;
  return {
    exchangeKey: ex.key,
    method: ex.method,
    ...(params !== undefined ? { params } : {}),
    era: ex.era,
    notifications,
    response: { afterUs: after(responseUs), message: ex.response as JsonRpcResponse },
    overSse,
  };
}
