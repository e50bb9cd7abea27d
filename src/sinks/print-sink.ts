/**
 * `--print`: one line per completed exchange, as mitmdump prints flows: time, connection, method,
 * target, outcome, latency, SSE events and progress. Written through `writeLine` (the tap's stderr,
 * never the stdio tap's stdout); colour only when asked (a TTY). Text from the traffic is made
 * line-safe: a tool named with escape sequences cannot act on the terminal.
 */
import type { TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import { formatUs, lineSafe, painter, type Paint } from '../report/format.js';
import { emptyStats, type Sink, type SinkStats } from './sink.js';

export interface PrintSinkOptions {
  writeLine(line: string): void;
  colour: boolean;
}

export class PrintSink implements Sink {
  readonly name = 'print';
  private readonly counts: SinkStats = emptyStats();
  private readonly paint: Paint;

  constructor(private readonly opts: PrintSinkOptions) {
    this.paint = painter(opts.colour);
  }

  onEvent(event: TapEvent): void {
    this.counts.events++;
    try {
      if (event.type !== 'exchange-completed' && event.type !== 'exchange-orphaned') return;
      this.opts.writeLine(printLine(event.exchange, this.paint, event.type === 'exchange-orphaned'));
    } catch {
      this.counts.errors++;
    }
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  stats(): SinkStats {
    return { ...this.counts };
  }
}

/** `12:03:04.567 conn-1 tools/call echo ok 12.3ms sse=2 progress=3` (time of the end, local clock). */
export function printLine(e: Exchange, paint: Paint, orphan = false): string {
  const end = e.endUs ?? e.startUs;
  const outcome = orphan ? 'orphan_response' : e.outcome;
  const colourOf = outcome === 'ok' ? paint.good : paint.bad;
  const parts = [
    paint.dim(clockTime(end)),
    lineSafe(e.connectionId),
    `${e.direction === 's2c' ? '<- ' : ''}${lineSafe(e.method)}`,
    ...(e.target !== undefined ? [paint.bold(lineSafe(e.target))] : []),
    colourOf(outcome + (e.errorCode !== undefined ? ` ${e.errorCode}` : '')),
    formatUs(e.latencyUs),
  ];
  const sse = e.transport?.eventTimesUs?.length;
  if (sse) parts.push(`sse=${sse}`);
  if (e.progress.length) parts.push(`progress=${e.progress.length}`);
  if (e.transport?.httpStatus !== undefined && e.transport.httpStatus >= 400) parts.push(`http=${e.transport.httpStatus}`);
  return parts.join(' ');
}

function clockTime(us: number): string {
  const d = new Date(Math.floor(us / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}
