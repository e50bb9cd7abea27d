/**
 * Keeps secrets out of recordings, spans and logs. A secret becomes a keyed-hash token
 * (`redacted:hmac-sha256:<16 hex>`): equal secrets give equal tokens under one key, so a recording
 * still shows "the same credential was used twice" without holding it. The key is random per
 * Redactor unless configured (e.g. `MCPTAP_REDACT_KEY`), which makes tokens comparable across runs.
 *
 * Field names match exact JSON keys, case-insensitively: `token` is redacted, `progressToken` and
 * `nextCursor` are not.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'redacted:hmac-sha256:';
export const DEFAULT_REDACTED_HEADERS: readonly string[] = ['authorization', 'cookie', 'set-cookie', 'proxy-authorization', 'x-api-key'];
export const DEFAULT_REDACTED_FIELDS: readonly string[] = [
  'password', 'secret', 'api_key', 'apikey', 'access_token', 'refresh_token', 'client_secret', 'authorization', 'token',
];
export const REDACT_KEY_ENV = 'MCPTAP_REDACT_KEY';

export interface RedactorOptions {
  /** HMAC key; random (per Redactor, i.e. per recording) when absent. */
  key?: Buffer | string;
  /** Extra header names to redact (added to the defaults). */
  headers?: readonly string[];
  /** Extra JSON field names to redact (added to the defaults). */
  fields?: readonly string[];
}

type HeaderValue = string | string[] | number | undefined;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class Redactor {
  private readonly key: Buffer;
  private readonly headers: ReadonlySet<string>;
  private readonly fields: ReadonlySet<string>;
  private readonly maxFieldLen: number;
  /** The ASCII field names as lower-case bytes, by length: plain keys are matched without making strings. */
  private readonly asciiFields: (Uint8Array[] | undefined)[] = [];
  private readonly jsonFieldRe: RegExp;
  private readonly textFieldRe: RegExp;
  private readonly flagFieldRe: RegExp;
  private lastRaw: [Buffer, Buffer] | undefined;

  constructor(opts: RedactorOptions = {}) {
    this.key = opts.key === undefined ? randomBytes(32) : Buffer.from(opts.key);
    this.headers = new Set([...DEFAULT_REDACTED_HEADERS, ...(opts.headers ?? [])].map((h) => h.toLowerCase()));
    this.fields = new Set([...DEFAULT_REDACTED_FIELDS, ...(opts.fields ?? [])].map((f) => f.toLowerCase()));
    this.maxFieldLen = Math.max(...[...this.fields].map((f) => f.length));
    for (const f of this.fields) {
      if (!/^[\x00-\x7f]*$/.test(f)) continue; // a non-ASCII name can only match a non-ASCII key: the slow path
      (this.asciiFields[f.length] ??= []).push(Buffer.from(f, 'latin1'));
    }
    const names = [...this.fields].map(escapeRe).join('|');
    // A JSON member `"name": value` where value is a string or a scalar token (for truncated JSON).
    this.jsonFieldRe = new RegExp(`("(?:${names})"\\s*:\\s*)(?!"${TOKEN_PREFIX})("(?:[^"\\\\]|\\\\.)*"?|[^,}\\]\\s]+)`, 'gi');
    // Free text (log lines, command lines): `name=value`, `name: value`, `Authorization: Bearer value`;
    // `-` and `_` inside a name match either (`--api-key=v` as `api_key`).
    const flexNames = [...this.fields].map((f) => escapeRe(f).replace(/[-_]/g, '[-_]')).join('|');
    this.textFieldRe = new RegExp(`\\b(${flexNames})\\b(\\s*[=:]\\s*)(?!(?:(?:bearer|basic|token)\\s+)?${TOKEN_PREFIX})(?:(bearer|basic|token)\\s+)?("[^"]*"|'[^']*'|[^\\s,;&"']+)`, 'gi');
    // A command-line flag and its separate value: `--token value`, `-password value` (not `--token --next`).
    this.flagFieldRe = new RegExp(`(^|\\s)(--?)(${flexNames})(\\s+)(?!-)(?!${TOKEN_PREFIX})("[^"]*"|'[^']*'|\\S+)`, 'gi');
  }

  /** The token that stands for `secret`. */
  token(secret: string): string {
    return TOKEN_PREFIX + createHmac('sha256', this.key).update(secret).digest('hex').slice(0, 16);
  }

  isSensitiveHeader(name: string): boolean {
    return this.headers.has(name.toLowerCase());
  }

  isSensitiveField(name: string): boolean {
    return this.fields.has(name.toLowerCase());
  }

  /** A copy of `h` with sensitive header values replaced by tokens; `h` itself is not modified. */
  redactHeaders<T extends Record<string, HeaderValue>>(h: T): T {
    const out: Record<string, HeaderValue> = { ...h };
    for (const [name, v] of Object.entries(h)) {
      if (v === undefined || !this.isSensitiveHeader(name)) continue;
      out[name] = Array.isArray(v) ? v.map((x) => this.tokenOnce(x)) : this.tokenOnce(String(v));
    }
    return out as T;
  }

  /** `value` with sensitive fields replaced by tokens. Copy-on-write: returns `value` itself when nothing matched. */
  redactJson<T>(value: T): T {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      value.forEach((v, i) => {
        const r = this.redactJson(v);
        if (r !== v) (out ??= value.slice())[i] = r;
      });
      return (out ?? value) as T;
    }
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const r = this.isSensitiveField(k) ? this.redactValue(v) : this.redactJson(v);
      if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
    }
    return (out ?? value) as T;
  }

  /**
   * The raw bytes of a message with sensitive fields redacted. Fast path: when no JSON key in `raw`
   * names a sensitive field, returns `raw` itself (same Buffer object) without parsing it.
   * Otherwise re-serialises the redacted JSON; bytes that do not parse are redacted textually.
   */
  redactRaw(raw: Buffer): Buffer {
    // The frames of one JSON-RPC batch share one raw Buffer: redact it once.
    if (this.lastRaw?.[0] === raw) return this.lastRaw[1];
    const out = this.redactRawUncached(raw);
    this.lastRaw = out === raw ? undefined : [raw, out];
    return out;
  }

  private redactRawUncached(raw: Buffer): Buffer {
    if (!this.mentionsSensitiveKey(raw)) return raw;
    const text = raw.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      const redacted = this.redactText(text);
      return redacted === text ? raw : Buffer.from(redacted, 'utf8');
    }
    const redacted = this.redactJson(value);
    return redacted === value ? raw : Buffer.from(JSON.stringify(redacted), 'utf8');
  }

  /** Free text (log lines, error details, truncated JSON, command lines): redacts `"field": value`, `field=value`, `field: value`, `--field value`. */
  redactText(text: string): string {
    const once = text.replace(this.jsonFieldRe, (_m, head: string, v: string) => `${head}"${this.token(unquote(v))}"`);
    const twice = once.replace(this.textFieldRe, (_m, name: string, sep: string, scheme: string | undefined, v: string) =>
      `${name}${sep}${scheme ? `${scheme} ` : ''}${this.token(unquote(v))}`);
    return twice.replace(this.flagFieldRe, (_m, lead: string, dashes: string, name: string, gap: string, v: string) => `${lead}${dashes}${name}${gap}${this.token(unquote(v))}`);
  }

  /**
   * Cheap scan: does any JSON object key in `raw` name a sensitive field? Walks string literals with
   * native `indexOf`, honouring backslash escapes, so large string values cost one jump each. A key
   * of plain ASCII (nearly every key) is compared as bytes, case-folded; any other key (escapes,
   * non-ASCII letters, which lower-case in surprising ways) is decoded and looked up as a string.
   */
  mentionsSensitiveKey(raw: Buffer): boolean {
    let open = findQuote(raw, 0);
    while (open !== -1) {
      const close = closingQuote(raw, open + 1);
      if (close === -1) return false;
      const len = close - open - 1;
      // Allow for \uXXXX escapes (6 bytes per character) in a key.
      if (len > 0 && len <= this.maxFieldLen * 6 && followedByColon(raw, close + 1) && this.isSensitiveKey(raw, open + 1, close)) return true;
      open = findQuote(raw, close + 1);
    }
    return false;
  }

  /** Is the key in `raw[start, end)` (between its quotes) a sensitive field name? */
  private isSensitiveKey(raw: Buffer, start: number, end: number): boolean {
    for (let i = start; i < end; i++) {
      const b = raw[i]!;
      if (b >= 0x80 || b === BACKSLASH) return this.isSensitiveField(keyText(raw, start, end));
    }
    const candidates = this.asciiFields[end - start];
    if (!candidates) return false;
    for (const name of candidates) {
      let i = 0;
      while (i < name.length && lowerAscii(raw[start + i]!) === name[i]) i++;
      if (i === name.length) return true;
    }
    return false;
  }

  private redactValue(v: unknown): unknown {
    if (v === null || v === undefined) return v;
    if (typeof v === 'string') return this.tokenOnce(v);
    return this.token(JSON.stringify(v));
  }

  private tokenOnce(v: string): string {
    return v.startsWith(TOKEN_PREFIX) ? v : this.token(v);
  }
}

/** A Redactor keyed from `MCPTAP_REDACT_KEY` when set (tokens comparable across recordings), else random. */
export function redactorFromEnv(env: Record<string, string | undefined>, opts: Omit<RedactorOptions, 'key'> = {}): Redactor {
  const key = env[REDACT_KEY_ENV];
  return new Redactor({ ...opts, ...(key ? { key } : {}) });
}

function closingQuote(raw: Buffer, from: number): number {
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
function findQuote(raw: Buffer, from: number): number {
  const near = Math.min(raw.length, from + 24);
  for (let i = from; i < near; i++) if (raw[i] === QUOTE) return i;
  return near < raw.length ? raw.indexOf(QUOTE, near) : -1;
}

function lowerAscii(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
}

function followedByColon(raw: Buffer, from: number): boolean {
  for (let i = from; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === COLON) return true;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return false;
  }
  return false;
}

function keyText(raw: Buffer, start: number, end: number): string {
  const s = raw.toString('utf8', start, end);
  if (!s.includes('\\')) return s;
  try {
    return JSON.parse(`"${s}"`) as string;
  } catch {
    return s;
  }
}

function unquote(v: string): string {
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))) return v.slice(1, -1);
  return v.startsWith('"') ? v.slice(1) : v;
}
