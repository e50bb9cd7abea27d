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
import { matchesPattern, parsePointer, type Segments } from '../data-file/json-pointer.js';
import { BACKSLASH, closingQuote, findQuote, followedByColon, jsonValueEnd, keyText, lowerAscii, unquote } from './json-scan.js';
import { linearRegExp } from './linear-regexp.js';

export const TOKEN_PREFIX = 'redacted:hmac-sha256:';
export const DEFAULT_REDACTED_HEADERS: readonly string[] = ['authorization', 'cookie', 'set-cookie', 'proxy-authorization', 'x-api-key'];
export const DEFAULT_REDACTED_FIELDS: readonly string[] = [
  'password',
  'secret',
  'api_key',
  'apikey',
  'access_token',
  'refresh_token',
  'client_secret',
  'authorization',
  'token',
];
export const REDACT_KEY_ENV = 'MCPTAP_REDACT_KEY';
/** Authorization schemes whose credentials are several parameters, all redacted (`Digest username="u", response="..."`). */
const MULTI_PART_SCHEMES = 'digest|negotiate|ntlm|hoba|mutual|scram-sha-1|scram-sha-256|aws4-hmac-sha256';

export interface RedactorOptions {
  /** HMAC key; random (per Redactor, i.e. per recording) when absent. */
  key?: Buffer | string;
  /** Extra header names to redact (added to the defaults). */
  headers?: readonly string[];
  /** Extra JSON field names to redact (added to the defaults). */
  fields?: readonly string[];
  /** JSON Pointers into each JSON-RPC message (`/params/arguments/note`, `*` for any one key or index): the value there becomes a token. */
  paths?: readonly string[];
  /** Regular expressions (sources; linear-time, see linear-regexp.ts): every match in a string value or a log line becomes a token. */
  patterns?: readonly string[];
}

/** The user's redaction rules (`--redact FILE`, docs/redaction.md): plain data, so it crosses threads and processes. */
export type RedactionRules = Pick<RedactorOptions, 'fields' | 'headers' | 'paths' | 'patterns'>;

/** `rules` with more field and header names added (the `--redact-header` flags). */
export function withNames(rules: RedactionRules | undefined, fields: readonly string[] = [], headers: readonly string[] = []): RedactionRules {
  return { ...rules, fields: [...(rules?.fields ?? []), ...fields], headers: [...(rules?.headers ?? []), ...headers] };
}

/** A token already in a string: the user's patterns never look inside one (so redacting twice changes nothing). */
const TOKEN_RE = new RegExp(`${TOKEN_PREFIX}[0-9a-f]{16}`, 'g');

/** What {@link maskTokens} puts where a token was. */
export const MASKED_TOKEN = '<redacted>';

/**
 * `value` with every redaction token in its strings replaced by {@link MASKED_TOKEN}: for matching a
 * request against a redacted recording when the two were redacted under different keys. Copy-on-write.
 */
export function maskTokens<T>(value: T): T {
  if (typeof value === 'string') return (value.includes(TOKEN_PREFIX) ? value.replace(TOKEN_RE, MASKED_TOKEN) : value) as T;
  if (value === null || typeof value !== 'object') return value;
  return mapMembers(value, (_k, v) => maskTokens(v));
}

type HeaderValue = string | string[] | number | undefined;

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
  private readonly headerLineRe: RegExp;
  private readonly authSchemeRe: RegExp;
  private lastRaw: [Buffer, Buffer] | undefined;
  private readonly paths: Segments[];
  private readonly patterns: RegExp[];

  constructor(opts: RedactorOptions = {}) {
    this.key = opts.key === undefined ? randomBytes(32) : Buffer.from(opts.key);
    this.paths = (opts.paths ?? []).map(parsePointer);
    this.patterns = (opts.patterns ?? []).map(linearRegExp);
    this.headers = new Set([...DEFAULT_REDACTED_HEADERS, ...(opts.headers ?? [])].map((h) => h.toLowerCase()));
    this.fields = new Set([...DEFAULT_REDACTED_FIELDS, ...(opts.fields ?? [])].map((f) => f.toLowerCase()));
    this.maxFieldLen = Math.max(...[...this.fields].map((f) => f.length));
    for (const f of this.fields) {
      if (!/^[\x00-\x7f]*$/.test(f)) continue; // a non-ASCII name can only match a non-ASCII key: the slow path
      (this.asciiFields[f.length] ??= []).push(Buffer.from(f, 'latin1'));
    }
    const names = [...this.fields].map(escapeRe).join('|');
    // The head of a JSON member `"name": ` (its value is found by scanning: a string, an object or
    // array, or a scalar, any of them cut short in truncated JSON).
    this.jsonFieldRe = new RegExp(`"(?:${names})"\\s*:\\s*`, 'gi');
    // Free text (log lines, command lines): `name=value`, `name: value`, `Authorization: Bearer value`;
    // `-` and `_` inside a name match either (`--api-key=v` as `api_key`), and a name may end a
    // longer one after `-` or `_` (`GITHUB_TOKEN=v`, `--auth-token v`; not `progressToken`).
    const flexNames = [...this.fields].map((f) => escapeRe(f).replace(/[-_]/g, '[-_]')).join('|');
    // A name starts a word, or follows dashes at the start of one (`--auth-token`): never after a
    // letter, digit, `_` or a word's inner `-`, so each word is tried once (linear in the text).
    const name = `(?<![A-Za-z0-9_])(?<![A-Za-z0-9]-)((?:[A-Za-z0-9]+[-_])*(?:${flexNames}))(?![A-Za-z0-9])`;
    this.textFieldRe = new RegExp(
      `${name}(\\s*[=:]\\s*)(?!(?:(?:bearer|basic|token|${MULTI_PART_SCHEMES})\\s+)?${TOKEN_PREFIX})(?:(bearer|basic|token)\\s+)?("[^"]*"|'[^']*'|[^\\s,;&"']+)`,
      'gi',
    );
    // A command-line flag and its separate value: `--token value`, `-password value` (not `--token --next`).
    this.flagFieldRe = new RegExp(`(^|\\s)(--?)((?:[A-Za-z0-9]+[-_])*(?:${flexNames}))(\\s+)(?!-)(?!${TOKEN_PREFIX})("[^"]*"|'[^']*'|\\S+)`, 'gi');
    // A sensitive header written out as a line (`Cookie: a=1; b=2`): its whole value, to the end of
    // the line. Authorization keeps its scheme (below); a one-word scheme's credential is taken above.
    const lineHeaders = [...this.headers]
      .filter((h) => !/^(proxy-)?authorization$/.test(h))
      .map(escapeRe)
      .join('|');
    this.headerLineRe = new RegExp(`(?<![A-Za-z0-9-])(${lineHeaders})(\\s*:\\s*)(?!\\s*${TOKEN_PREFIX})([^\\r\\n]+)`, 'gi');
    // Authorization schemes whose credentials are several parameters (Digest: username, response, ...).
    this.authSchemeRe = new RegExp(
      `(?<![A-Za-z0-9-])((?:proxy-)?authorization\\s*:\\s*)(${MULTI_PART_SCHEMES})(\\s+)(?!\\s*${TOKEN_PREFIX})([^\\r\\n]+)`,
      'gi',
    );
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
      if (v === undefined) continue;
      if (this.isSensitiveHeader(name)) out[name] = Array.isArray(v) ? v.map((x) => this.tokenOnce(x)) : this.tokenOnce(String(v));
      else if (this.patterns.length > 0 && typeof v !== 'number') out[name] = Array.isArray(v) ? v.map((x) => this.redactPatterns(x)) : this.redactPatterns(v);
    }
    return out as T;
  }

  /**
   * What telemetry exports of a value (content capture, error messages): sensitive fields as in
   * {@link redactJson}, and every string in it as free text ({@link redactText}), since spans go
   * where more people look than at a recording. Copy-on-write.
   */
  redactContent<T>(value: T, at?: readonly (string | number)[]): T {
    return this.textInStrings(this.redactJson(value, at));
  }

  private textInStrings<T>(value: T): T {
    if (typeof value === 'string') return this.redactText(value) as T;
    if (value === null || typeof value !== 'object') return value;
    return mapMembers(value, (_k, v) => this.textInStrings(v));
  }

  /**
   * `value` with sensitive fields, the values at the rules' paths and the rules' pattern matches
   * replaced by tokens. `at`: where `value` sits in its JSON-RPC message (default: it is the message;
   * an array there is a batch, each item a message). Copy-on-write: `value` itself when nothing matched.
   */
  redactJson<T>(value: T, at?: readonly (string | number)[]): T {
    if (at === undefined && Array.isArray(value) && this.paths.length > 0) return mapMembers(value, (_k, v) => this.redactAt(v, []));
    return this.redactAt(value, at ?? []) as T;
  }

  private redactAt(value: unknown, path: readonly (string | number)[]): unknown {
    if (typeof value === 'string') return this.redactPatterns(value);
    if (value === null || typeof value !== 'object') return value;
    const paths = this.paths.length > 0;
    return mapMembers(value, (k, v) => {
      const p = paths ? [...path, k] : path;
      if ((typeof k === 'string' && this.isSensitiveField(k)) || (paths && this.paths.some((pattern) => matchesPattern(pattern, p))))
        return this.redactValue(v);
      return this.redactAt(v, p);
    });
  }

  /** Every match of the user's patterns in `s` (outside tokens already there) becomes a token. */
  private redactPatterns(s: string): string {
    if (this.patterns.length === 0) return s;
    let out = s;
    for (const re of this.patterns) out = this.redactPattern(re, out);
    return out === s ? s : out;
  }

  /**
   * One pattern over the whole string (so `^` and `$` mean the same on a second pass as on the
   * first: redacting twice changes nothing, except that `\b`/`\B` beside a token may now match and
   * add a token). A match touching a token is never replaced: the
   * text before the token is tried on its own, and matching goes on after the token.
   */
  private redactPattern(re: RegExp, s: string): string {
    const tokens = [...s.matchAll(TOKEN_RE)];
    if (tokens.length === 0) return s.replace(re, (m) => (m === '' ? m : this.token(m)));
    let out = '';
    let from = 0;
    let t = 0;
    re.lastIndex = 0;
    for (let m = re.exec(s); m; m = re.exec(s)) {
      const start = m.index;
      const end = start + m[0].length;
      if (m[0] === '') {
        re.lastIndex = start + 1;
        continue;
      }
      while (t < tokens.length && tokens[t]!.index + tokens[t]![0].length <= start) t++;
      const tok = tokens[t];
      if (tok === undefined || tok.index >= end) {
        out += s.slice(from, start) + this.token(m[0]);
        from = end;
        continue;
      }
      const tokEnd = tok.index + tok[0].length;
      const before = start < tok.index ? s.slice(start, tok.index).replace(re, (x) => (x === '' ? x : this.token(x))) : '';
      out += s.slice(from, Math.min(start, tok.index)) + before + tok[0];
      from = tokEnd;
      re.lastIndex = tokEnd;
    }
    return out + s.slice(from);
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
    // The user's paths and patterns can match anywhere: those rules cost a parse of every message.
    if (this.paths.length === 0 && this.patterns.length === 0 && !this.mentionsSensitiveKey(raw)) return raw;
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

  /**
   * Free text (log lines, error details, truncated JSON, command lines, URLs): redacts
   * `"field": value` (a string, object or array), `field=value`, `field: value`, `--field value`,
   * sensitive header lines (`Cookie: ...`, `Authorization: Digest ...`) and the password of a URL
   * (`scheme://user:password@host`).
   */
  redactText(text: string): string {
    let out = this.redactJsonMembers(text);
    out = out.replace(this.headerLineRe, (_m, name: string, sep: string, v: string) => `${name}${sep}${this.token(v.trim())}`);
    out = out.replace(this.authSchemeRe, (_m, head: string, scheme: string, gap: string, v: string) => `${head}${scheme}${gap}${this.token(v.trim())}`);
    out = out.replace(
      this.textFieldRe,
      (_m, name: string, sep: string, scheme: string | undefined, v: string) => `${name}${sep}${scheme ? `${scheme} ` : ''}${this.token(unquote(v))}`,
    );
    out = out.replace(
      this.flagFieldRe,
      (_m, lead: string, dashes: string, name: string, gap: string, v: string) => `${lead}${dashes}${name}${gap}${this.token(unquote(v))}`,
    );
    out = out.replace(URL_PASSWORD_RE, (_m, head: string, password: string) => `${head}${this.token(password)}@`);
    return this.redactPatterns(out);
  }

  /** `"field": value` members in text that need not parse: each value, whole, becomes a token. */
  private redactJsonMembers(text: string): string {
    let out = '';
    let from = 0;
    this.jsonFieldRe.lastIndex = 0;
    for (let m = this.jsonFieldRe.exec(text); m; m = this.jsonFieldRe.exec(text)) {
      const start = m.index + m[0].length;
      if (text.startsWith(`"${TOKEN_PREFIX}`, start)) continue;
      const end = jsonValueEnd(text, start);
      if (end === start) continue;
      const v = text.slice(start, end);
      out += `${text.slice(from, start)}"${this.token(v.startsWith('"') ? unquote(v) : v)}"`;
      from = end;
      this.jsonFieldRe.lastIndex = end;
    }
    return from === 0 ? text : out + text.slice(from);
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

/**
 * A JSON object or array with each member replaced by `member(key, value)` (the index for an
 * array's items). Copy-on-write: `value` itself when no member changed.
 */
function mapMembers<T extends object>(value: T, member: (key: string | number, v: unknown) => unknown): T {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v: unknown, i) => {
      const r = member(i, v);
      if (r !== v) (out ??= value.slice())[i] = r;
    });
    return (out ?? value) as T;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const r = member(k, v);
    if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
  }
  return (out ?? value) as T;
}

/** `scheme://user:password@`: the password (group 2), not one already redacted. */
const URL_PASSWORD_RE = new RegExp(`((?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^\\s/:@]*:)(?!${TOKEN_PREFIX})([^\\s@/]+)@`, 'gi');
