/**
 * Fuzzing the redactor: any text, any JSON, any bytes never make it throw; a secret under a
 * sensitive field never survives (in parsed JSON, in raw bytes, in text that does not parse);
 * redacting twice changes nothing (for user patterns with `\b`, it only adds tokens); the input is never modified; the output is bounded by the input
 * (each replaced value becomes one fixed-size token). Time per byte: user patterns always compile
 * for V8's linear-time engine or are refused with a reason (never a backtracking regexp).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { Redactor, TOKEN_PREFIX } from '../../src/redact/redactor.js';
import { linearRegExp } from '../../src/redact/linear-regexp.js';
import { fuzz } from './fuzz-harness.js';

const KEY = 'fuzz-key';
const TOKEN_G = new RegExp(`${TOKEN_PREFIX}[0-9a-f]{16}`, 'g');
/** A `\b` or `\B` assertion in a pattern (an odd run of backslashes before the letter). */
const WORD_BOUNDARY = /(?<!\\)(?:\\\\)*\\[bB]/;
const tokensIn = (s: string): string[] => s.match(TOKEN_G) ?? [];
const isSubsequence = (sub: string, of: string): boolean => {
  let i = 0;
  for (const c of of) if (c === sub[i]) i++;
  return i === sub.length;
};
const TOKEN_LEN = TOKEN_PREFIX.length + 16;
const redactor = new Redactor({ key: KEY, fields: ['session_key'], paths: ['/params/arguments/note'], patterns: ['sk-[A-Za-z0-9]{8,}'] });
const plain = new Redactor({ key: KEY });
/** Field names only: the fast path (raw bytes returned as they are when no key is sensitive). */
const fieldsOnly = new Redactor({ key: KEY, fields: ['session_key'] });

/** A secret no generated text can contain by chance. */
const secret = fc.stringMatching(/^[A-Za-z0-9]{6,12}$/).map((s) => `Zq9${s}`);
const sensitiveKey = fc.constantFrom('password', 'Token', 'API_KEY', 'client_secret', 'session_key', 'authorization');

/** JSON with secrets planted under sensitive keys, at any depth. */
const planted = fc
  .tuple(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.tuple(sensitiveKey, secret, fc.nat(3)), { minLength: 1, maxLength: 3 }))
  .map(([base, secrets]) => {
    let doc: unknown = { base };
    for (const [k, s, depth] of secrets) {
      let inner: Record<string, unknown> = { [k]: s };
      for (let i = 0; i < depth; i++) inner = { [`n${i}`]: inner };
      doc = { ...(doc as object), [`x${depth}${k}`]: inner };
    }
    return { doc, secrets: secrets.map(([, s]) => s) };
  });

/** Text with secrets written the ways logs and command lines write them. */
const textWithSecret = fc
  .tuple(
    fc.string({ maxLength: 30 }),
    sensitiveKey,
    secret,
    fc.constantFrom('=', ': ', ' = ', '"%k": "%s"', '--%k %s', 'https://u:%s@h/'),
    fc.string({ maxLength: 30 }),
  )
  .map(([pre, k, s, form, post]) => {
    const middle = form.includes('%') ? form.replace('%k', k.toLowerCase()).replace('%s', s) : `${k}${form}${s}`;
    return { text: `${pre} ${middle} ${post}`, secret: s };
  });

describe('fuzz: redactor', () => {
  it('any text: never throws, idempotent, bounded output', () => {
    fuzz(
      'redactor: free text',
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.string({ unit: 'binary', maxLength: 200 }),
          textWithSecret.map((t) => t.text),
        ),
        (text) => {
          const once = redactor.redactText(text);
          assert.equal(redactor.redactText(once), once);
          assert.ok(once.length <= (TOKEN_LEN + 2) * (text.length + 1), `${once.length} chars from ${text.length}`);
        },
      ),
    );
  });

  it('secrets in text written as field=value, "field": value, --field value or a URL password never survive', () => {
    fuzz(
      'redactor: secrets in text',
      fc.property(textWithSecret, ({ text, secret: s }) => {
        assert.ok(!redactor.redactText(text).includes(s), text);
      }),
    );
  });

  it('JSON with planted secrets: none survives redactJson or redactRaw; the input is untouched; redacting twice changes nothing', () => {
    fuzz(
      'redactor: JSON and raw bytes',
      fc.property(planted, ({ doc, secrets }) => {
        const before = JSON.stringify(doc);
        const out = redactor.redactJson(doc);
        assert.equal(JSON.stringify(doc), before);
        const outText = JSON.stringify(out);
        for (const s of secrets) assert.ok(!outText.includes(s), `${s} survived in ${outText}`);
        assert.deepEqual(redactor.redactJson(out), out);
        const raw = fieldsOnly.redactRaw(Buffer.from(before));
        for (const s of secrets) assert.ok(!raw.toString().includes(s), `${s} survived redactRaw`);
        // Truncated JSON goes the text way: still no secret.
        const cut = fieldsOnly.redactRaw(Buffer.from(before.slice(0, -1)));
        for (const s of secrets) assert.ok(!cut.toString().includes(s) || !before.slice(0, -1).includes(s), `${s} survived in truncated JSON`);
      }),
      { share: 0.5 },
    );
  });

  it('any bytes: redactRaw never throws; the same Buffer back when nothing is sensitive', () => {
    fuzz(
      'redactor: any bytes',
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.jsonValue({ maxDepth: 3 }).map((v) => new TextEncoder().encode(JSON.stringify(v) ?? '')),
        ),
        (bytes) => {
          const raw = Buffer.from(bytes);
          const out = plain.redactRaw(raw);
          if (!plain.mentionsSensitiveKey(raw) && out !== raw) assert.equal(out.toString(), plain.redactText(raw.toString()));
          assert.ok(out.length <= (TOKEN_LEN + 2) * (raw.length + 1));
        },
      ),
    );
  });

  it('user patterns: compiled for the linear-time engine, or refused with a reason', () => {
    fuzz(
      'redactor: user patterns are linear',
      fc.property(
        fc.oneof(fc.string({ maxLength: 20 }), fc.stringMatching(/^[()[\]\\*+?{}|^$.a-c0-9<=!:k-]{0,16}$/)),
        fc.string({ maxLength: 80 }),
        (source, text) => {
          let re: RegExp;
          try {
            re = linearRegExp(source);
          } catch (err) {
            assert.ok(err instanceof Error && /cannot run in linear time|not a valid regular expression/.test(err.message), String(err));
            return;
          }
          assert.ok(re.flags.includes('l'), `${source} compiled without the linear engine`);
          if (re.test('')) return; // the rules loader refuses these; the Redactor is never given one
          const r = new Redactor({ key: KEY, patterns: [source] });
          const once = r.redactText(text);
          const twice = r.redactText(once);
          if (!WORD_BOUNDARY.test(source)) return assert.equal(twice, once);
          // `\b` and `\B` look at the character beside a match, which may now be a token's first or
          // last: a second pass may redact more, but never splits a token or brings text back.
          assert.deepEqual(
            tokensIn(once).filter((t) => !tokensIn(twice).includes(t)),
            [],
          );
          assert.ok(isSubsequence(twice.replace(TOKEN_G, ''), once.replace(TOKEN_G, '')), `${source}: ${once} -> ${twice}`);
        },
      ),
      { share: 0.5 },
    );
  });
});
