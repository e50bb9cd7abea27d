/**
 * The replay's traffic (TrafficObserver) fed into a Pipeline as a tap would feed it: one connection
 * per replayed session. `--update` records what comes out; `--check` judges it.
 */
import type { Transport } from '../model/events.js';
import type { JsonRpcMessage } from '../model/jsonrpc.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { baselineConnectionId, type RecordedTimes } from './recorded-times.js';
import type { FrameContext } from '../model/frame.js';
import type { SessionFacts, TrafficObserver } from './replay-traffic.js';

/** `times`: a text baseline's stable times (the recorded ones) and connection ids, and no HTTP session ids. */
export function pipelineObserver(pipeline: Pipeline, opts: { transport: Transport; target: string; times?: RecordedTimes }): TrafficObserver {
  const { times } = opts;
  const channel = opts.transport === 'stdio' ? 'stdio' : 'http-body';
  const connectionId = (session: string) => (times ? baselineConnectionId(session) : `replay ${session}`);
  return {
    opened: (session, timeUs) =>
      pipeline.openConnection({ connectionId: connectionId(session), transport: opts.transport, target: opts.target }, times?.at(session) ?? timeUs),
    message: (session, direction, message: JsonRpcMessage, timeUs, facts, recordedUs) => {
      // A text baseline leaves out what differs on every run: the times as measured, HTTP session ids.
      // The version the HTTP headers carried judges a session whose initialize was not replayed as a step.
      const context = times || !facts ? undefined : httpContext(opts.transport, facts);
      pipeline.pushMessage(
        { connectionId: connectionId(session), direction, channel, timeUs: times?.at(session, recordedUs) ?? timeUs, ...(context ? { context } : {}) },
        Buffer.from(JSON.stringify(message)),
      );
    },
    closed: (session, timeUs) => pipeline.closeConnection(connectionId(session), { reason: 'replay finished', timeUs: times?.at(session) ?? timeUs }),
  };
}

function httpContext(transport: Transport, facts: SessionFacts): FrameContext | undefined {
  const context: FrameContext = {
    ...(facts.sessionId !== undefined && { sessionId: facts.sessionId }),
    ...(transport === 'http' && facts.protocolVersion !== undefined && { headerProtocolVersion: facts.protocolVersion }),
  };
  return Object.keys(context).length > 0 ? context : undefined;
}

/** Both observers see every message (`--update` and `--check` together). */
export function teeObservers(a: TrafficObserver, b: TrafficObserver): TrafficObserver {
  return {
    opened: (...args) => (a.opened(...args), b.opened(...args)),
    message: (...args) => (a.message(...args), b.message(...args)),
    closed: (...args) => (a.closed(...args), b.closed(...args)),
  };
}
