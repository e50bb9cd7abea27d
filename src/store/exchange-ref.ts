/**
 * How a user or caller names an exchange. Programmatic callers pass an exact object; the CLI passes
 * the text the user typed, which {@link parseExchangeRef} reads as:
 * - `#12`        -> row id 12;
 * - `"1"`        -> the string id "1" (JSON string syntax);
 * - `1`, `-3`    -> the number id, falling back to the string id with that text;
 * - anything else -> an exchange key if one matches exactly, else a string id.
 * `1` and `"1"` are different ids; only the bare form falls back, and only when no number id matches.
 */
import type { Direction } from '../model/frame.js';
import type { JsonRpcId } from '../model/jsonrpc.js';

export type ExchangeRef = string | { key: string } | { rowid: number } | { id: JsonRpcId; connectionId?: string; direction?: Direction };

/** Candidate lookups in the order they are tried; the first that matches anything wins. */
export type ExchangeLookup = { key: string } | { rowid: number } | { id: JsonRpcId; connectionId?: string; direction?: Direction };

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

export function parseExchangeRef(ref: ExchangeRef): ExchangeLookup[] {
  if (typeof ref !== 'string') return [ref];
  if (/^#\d+$/.test(ref)) return [{ rowid: Number(ref.slice(1)) }];
  if (ref.length >= 2 && ref.startsWith('"') && ref.endsWith('"')) {
    try {
      const s: unknown = JSON.parse(ref);
      if (typeof s === 'string') return [{ id: s }];
    } catch {
      /* not valid JSON string syntax: treat the text literally below */
    }
  }
  if (NUMBER.test(ref)) return [{ key: ref }, { id: Number(ref) }, { id: ref }];
  return [{ key: ref }, { id: ref }];
}
