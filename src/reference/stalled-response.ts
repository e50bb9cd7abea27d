/**
 * Applies the stall schedule to an HTTP response: the status line waits out a stall window, and
 * so does every body chunk (an SSE event or a JSON body), in order.
 *
 * Cancellation still works through the gate: `pipeThrough` forwards a client's cancel of the
 * returned body to the SDK's stream (which is how a 2026-07-28 stream close reaches the handler).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { StallSchedule } from './stall-schedule.js';

export async function waitOutStall(schedule: StallSchedule): Promise<void> {
  const wait = schedule.delayMs();
  if (wait > 0) await sleep(wait);
}

export async function stallResponse(response: Response, schedule: StallSchedule): Promise<Response> {
  await waitOutStall(schedule);
  if (!response.body) return response;
  const gate = new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      await waitOutStall(schedule);
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(gate), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
