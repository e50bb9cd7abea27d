/**
 * Scanning raw JSON bytes and text without parsing them: where a string's closing quote is, what a
 * member's key says, where a value ends. The redactor's fast paths (redactor.ts).
 */

const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const COLON = 0x3a;

export function closingQuote(raw: Buffer, from: number): number {
  let q = findQuote(raw, from);
  while (q !== -1) {
    let slashes = 0;
    while (q - 1 - slashes >= from && raw[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
    q = findQuote(raw, q + 1);
  }
  return -1;
}

/** The next `"` at or after `from`, or -1. Most JSON strings are short: a few bytes are looked at here before native indexOf (whose call costs more). */
export function findQuote(raw: Buffer, from: number): number {
  const near = Math.min(raw.length, from + 24);
  for (let i = from; i < near; i++) if (raw[i] === QUOTE) return i;
  return near < raw.length ? raw.indexOf(QUOTE, near) : -1;
}

export function lowerAscii(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
}

export function followedByColon(raw: Buffer, from: number): boolean {
  for (let i = from; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === COLON) return true;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return false;
  }
  return false;
}

export function keyText(raw: Buffer, start: number, end: number): string {
  const s = raw.toString('utf8', start, end);
  if (!s.includes('\\')) return s;
  try {
    return JSON.parse(`"${s}"`) as string;
  } catch {
    return s;
  }
}

/**
 * Where the JSON value starting at `text[start]` ends: a string at its closing quote, an object or
 * array at its closing bracket (strings inside honoured), a scalar before `,`, `}`, `]` or space;
 * a value cut short ends with the text.
 */
export function jsonValueEnd(text: string, start: number): number {
  const c = text[start];
  if (c === '"') {
    for (let i = start + 1; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') return i + 1;
    }
    return text.length;
  }
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const d = text[i];
      if (d === '"') {
        for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      } else if (d === '{' || d === '[') depth++;
      else if ((d === '}' || d === ']') && --depth === 0) return i + 1;
    }
    return text.length;
  }
  let i = start;
  while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++;
  return i;
}

export function unquote(v: string): string {
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))) return v.slice(1, -1);
  return v.startsWith('"') ? v.slice(1) : v;
}
