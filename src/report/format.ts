/** Small pure text helpers shared by the recording reports. */
import stringWidth from 'string-width';

/** A duration in microseconds, human-sized: `850µs`, `12.3ms`, `4.56s`. */
export function formatUs(us: number | undefined): string {
  if (us === undefined || !Number.isFinite(us)) return '-';
  if (Math.abs(us) < 1000) return `${Math.round(us)}µs`;
  if (Math.abs(us) < 1_000_000) return `${(us / 1000).toFixed(1)}ms`;
  return `${(us / 1_000_000).toFixed(2)}s`;
}

/** An offset from a reference time, always signed: `+12.3ms`. */
export function formatOffset(us: number, fromUs: number): string {
  const d = us - fromUs;
  return `${d < 0 ? '-' : '+'}${formatUs(Math.abs(d))}`;
}

/** Epoch microseconds as an ISO-8601 timestamp. */
export function formatTime(us: number): string {
  const d = new Date(Math.floor(us / 1000));
  return Number.isNaN(d.getTime()) ? String(us) : d.toISOString();
}

/** A JSON-RPC id as the user should type it back: numbers bare, strings JSON-quoted. */
export function formatId(id: string | number): string {
  return typeof id === 'string' ? JSON.stringify(id) : String(id);
}

/**
 * Text for a terminal: control characters from recorded traffic (a tool named with an escape
 * sequence, a server's colour codes on stdout) are shown as `\u001b` and the like instead of acting
 * on the terminal. Newlines and tabs stay: the renderers lay text out with them.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Control characters (but tab and newline), and the invisible ones that reorder or hide text: zero
 * widths, line and paragraph separators, bidirectional overrides and isolates ("Trojan Source"), BOM.
 */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** {@link terminalSafe} for a table cell or a one-line field: tabs and line breaks are escaped too, so columns and lines hold. */
export function lineSafe(text: string): string {
  return terminalSafe(text).replace(/[\t\n]/g, (c) => (c === '\t' ? '\\t' : '\\n'));
}

/** Cuts `text` to `max` characters, saying how much was left out. */
export function truncate(text: string, max: number, hint = ''): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters${hint})`;
}

/**
 * Aligns rows into columns. `right` lists the column indexes to right-align (numbers); the last
 * column is not padded so lines carry no trailing spaces.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[], right: readonly number[] = []): string {
  const all = [header, ...rows];
  // Terminal columns, not code points: wide (CJK) and combining characters, colour codes.
  const widths = header.map((_, i) => Math.max(...all.map((r) => stringWidth(r[i] ?? ''))));
  return all
    .map((r) =>
      r
        .map((cell, i) => {
          if (i === r.length - 1 && !right.includes(i)) return cell;
          const fill = ' '.repeat(Math.max(0, widths[i]! - stringWidth(cell)));
          return right.includes(i) ? fill + cell : cell + fill;
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Text for an XML attribute or element (JUnit files): escaped, and the characters XML 1.0 forbids as U+FFFD. */
export function xmlText(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** Terminal emphasis; the plain one (no colour, `NO_COLOR`, not a TTY) leaves text as it is. */
export interface Paint {
  bad(s: string): string;
  good(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const PLAIN: Paint = { bad: (s) => s, good: (s) => s, dim: (s) => s, bold: (s) => s };
const COLOUR: Paint = {
  bad: (s) => `\x1b[31m${s}\x1b[39m`,
  good: (s) => `\x1b[32m${s}\x1b[39m`,
  dim: (s) => `\x1b[2m${s}\x1b[22m`,
  bold: (s) => `\x1b[1m${s}\x1b[22m`,
};

export function painter(color: boolean): Paint {
  return color ? COLOUR : PLAIN;
}
