/**
 * Fuzzing the header codec (2026-07-28 `=?base64?…?=` values, hop-by-hop rules, the check of the
 * standard headers against the body): any string survives encode then decode unchanged; an encoded
 * value is always sendable as an HTTP header value; any header text decodes without throwing; no
 * hop-by-hop header is ever forwarded; checking any headers against any message never throws.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { checkRequestHeaders, connectionTokens, decodeHeaderValue, encodeHeaderValue, isHopByHop } from '../../src/protocol/headers.js';
import { forwardRequestHeaders, forwardResponseHeaders } from '../../src/tap/http-forwarder.js';
import type { JsonRpcMessage } from '../../src/model/jsonrpc.js';
import { fuzz } from './fuzz-harness.js';

/** Well-formed Unicode (a lone surrogate has no UTF-8 form: no header could carry it). */
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('=?base64?', '=?base64?YQ==?=', ' x', '\t', ''),
);
/** What node:http lets through as a header value: visible ASCII and tabs/spaces inside, obs-text. */
const SENDABLE = /^(?:[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?)$/;

const headerName = fc.oneof(
  fc.constantFrom(
    'connection',
    'keep-alive',
    'transfer-encoding',
    'te',
    'upgrade',
    'host',
    'expect',
    'mcp-method',
    'mcp-name',
    'mcp-protocol-version',
    'x-a',
    'X-B',
  ),
  fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9-]{0,10}$/),
);
const headerValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('close', 'keep-alive', 'x-a, X-B', 'upgrade,te', '=?base64?dG9vbHMvY2FsbA==?=', '=?BASE64?!!?='),
);

describe('fuzz: header codec', () => {
  it('encode then decode gives the value back; the encoded form is a sendable header value', () => {
    fuzz(
      'headers: value round trip',
      fc.property(text, (v) => {
        if (v.isWellFormed && !v.isWellFormed()) return;
        const enc = encodeHeaderValue(v);
        assert.match(enc, SENDABLE);
        const dec = decodeHeaderValue(enc);
        assert.deepEqual(dec.ok && dec.value, v);
      }),
    );
  });

  it('any header text decodes without throwing, and a value that is not a sentinel comes back trimmed', () => {
    fuzz(
      'headers: decode any text',
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 60 }),
          fc.string({ maxLength: 40 }).map((s) => `=?base64?${s}?=`),
        ),
        (raw) => {
          const d = decodeHeaderValue(raw);
          if (d.ok && !d.encoded) assert.equal(d.value, raw.trim());
          if (!d.ok) assert.ok(d.reason.length > 0 && d.reason.length <= 64 + 6 * raw.length);
        },
      ),
    );
  });

  it('no hop-by-hop header (nor one named in Connection) is forwarded, either way; every other one is, in order', () => {
    fuzz(
      'headers: hop-by-hop',
      fc.property(fc.array(fc.tuple(headerName, headerValue), { maxLength: 12 }), (pairs) => {
        const raw = pairs.flat();
        const conn = pairs.filter(([n]) => n.toLowerCase() === 'connection').map(([, v]) => v);
        const connection = conn.length === 0 ? undefined : conn.join(', ');
        const listed = connectionTokens(connection);
        const out = forwardRequestHeaders(raw, connection);
        const kept = pairs.filter(([n]) => !isHopByHop(n.toLowerCase(), listed));
        assert.deepEqual(out, kept.flat());
        const bag: Record<string, string> = {};
        for (const [n, v] of pairs) bag[n.toLowerCase()] = v;
        const res = forwardResponseHeaders(bag);
        const resListed = connectionTokens(bag.connection);
        for (const n of Object.keys(res)) assert.ok(!isHopByHop(n, resListed), `${n} forwarded`);
      }),
    );
  });

  it('checking any headers against any message never throws; each mismatch names a header', () => {
    const message = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({
        jsonrpc: fc.constant('2.0'),
        id: fc.integer(),
        method: fc.constantFrom('tools/call', 'resources/read', 'prompts/get', 'tasks/get', 'ping', 'constructor', '__proto__'),
        params: fc.record(
          { name: text, uri: text, taskId: text, _meta: fc.record({ 'io.modelcontextprotocol/protocolVersion': fc.constantFrom('2026-07-28', 'x') }) },
          { requiredKeys: [] },
        ),
      }),
    );
    fuzz(
      'headers: check against the body',
      fc.property(fc.dictionary(headerName, fc.oneof(headerValue, fc.array(headerValue, { maxLength: 2 }))), message, (headers, msg) => {
        const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
        for (const m of checkRequestHeaders(lower, msg as JsonRpcMessage)) assert.ok(m.header.length > 0 && m.detail.length > 0);
      }),
    );
  });
});
