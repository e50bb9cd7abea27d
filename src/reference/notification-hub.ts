/**
 * Where the reference server's `trigger` tool sends list-changed and resource-updated
 * notifications: every place a client can be listening.
 * - 2026-07-28 over HTTP: the `subscriptions/listen` streams of the modern handler (its event bus);
 * - legacy over HTTP: each session's standalone GET stream (through the session's server);
 * - stdio (both eras): the connection's one server instance (the SDK routes a modern
 *   connection's notifications to its open `subscriptions/listen`).
 * Per-request modern HTTP instances never register: what they send goes to their own response.
 *
 * Every notification carries `_meta["io.mcptap/firedAtUs"]` (epoch µs) and `["io.mcptap/seq"]`,
 * so a listener can measure delivery delay from the moment the server fired it.
 */
import type { ServerEventBus } from '@modelcontextprotocol/server';
import { FIRED_AT_META, SEQ_META } from '../protocol/mcptap-meta.js';

export type TriggerKind = 'tools' | 'prompts' | 'resources' | 'resource';

/** What a registered server instance can do with a notification. */
export interface NotificationTarget {
  notification(n: { method: string; params?: Record<string, unknown> }): Promise<void>;
}

export const TRIGGER_METHODS: Record<TriggerKind, string> = {
  tools: 'notifications/tools/list_changed',
  prompts: 'notifications/prompts/list_changed',
  resources: 'notifications/resources/list_changed',
  resource: 'notifications/resources/updated',
};

export interface Fired {
  seq: number;
  firedAtUs: number;
  /** Places it was handed to (listen bus counts as one). */
  recipients: number;
}

export class NotificationHub {
  private readonly targets = new Set<NotificationTarget>();
  private bus: ServerEventBus | undefined;
  private seq = 0;

  constructor(private readonly nowUs: () => number) {}

  /** Registers a server instance; returns the unregister function. */
  add(t: NotificationTarget): () => void {
    this.targets.add(t);
    return () => this.targets.delete(t);
  }

  setBus(bus: ServerEventBus): void {
    this.bus = bus;
  }

  async fire(kind: TriggerKind, uri: string): Promise<Fired> {
    const seq = ++this.seq;
    const firedAtUs = this.nowUs();
    const _meta = { [FIRED_AT_META]: firedAtUs, [SEQ_META]: seq };
    const params: Record<string, unknown> = kind === 'resource' ? { uri, _meta } : { _meta };
    let recipients = 0;
    if (this.bus) {
      this.bus.publish(kind === 'resource' ? { kind: 'resource_updated', uri, params } : { kind: `${kind}_list_changed`, params });
      recipients++;
    }
    const sends = [...this.targets].map((t) => t.notification({ method: TRIGGER_METHODS[kind], params }));
    // A target whose transport went away is not an error of the trigger.
    for (const r of await Promise.allSettled(sends)) if (r.status === 'fulfilled') recipients++;
    return { seq, firedAtUs, recipients };
  }
}
