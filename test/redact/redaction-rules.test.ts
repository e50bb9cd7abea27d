import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';
import { McptapError } from '../../src/errors.js';
import { parseRedactionRules } from '../../src/redact/redaction-rules.js';
import { Redactor } from '../../src/redact/redactor.js';
import { contentAttributes } from '../../src/telemetry/otel-content.js';
import type { Exchange } from '../../src/model/exchange.js';

const TOKEN = /^redacted:hmac-sha256:[0-9a-f]{16}$/;
const call = (args: object) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: args } });

describe('Redactor with the user rules', () => {
  const r = new Redactor({ key: 'k', paths: ['/params/arguments/note', '/result/content/*/text'], patterns: ['sk-[a-z0-9]{8,}'] });

  it('redacts the values at the paths, only there, and leaves the message otherwise as it was', () => {
    const msg = call({ note: 'private words', text: 'hello', nested: { note: 'kept: another path' } });
    const out = r.redactJson(msg);
    expect(out.params.arguments.note).toBe(r.token('private words'));
    expect(out.params.arguments.text).toBe('hello');
    expect(out.params.arguments.nested.note).toBe('kept: another path');
    expect(msg.params.arguments.note).toBe('private words'); // copy-on-write
    const result = {
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    };
    const red = r.redactJson(result);
    expect(red.result.content.map((c) => c.text)).toEqual([r.token('a'), r.token('b')]);
    expect(red.result.content[0]!.type).toBe('text');
  });

  it('applies the paths to each message of a batch, and in raw bytes', () => {
    const batch = [call({ note: 'n1' }), call({ note: 'n2' })];
    const raw = Buffer.from(JSON.stringify(batch));
    const out = JSON.parse(r.redactRaw(raw).toString()) as ReturnType<typeof call>[];
    expect(out.map((m) => (m.params.arguments as { note: string }).note)).toEqual([r.token('n1'), r.token('n2')]);
  });

  it('replaces every match of a pattern in strings and free text, equal matches by equal tokens', () => {
    const out = r.redactJson(call({ text: 'use sk-abcdef123 then sk-abcdef123' }));
    const t = r.token('sk-abcdef123');
    expect(out.params.arguments.text).toBe(`use ${t} then ${t}`);
    expect(r.redactText('log: key sk-zzzzzzzz99 here')).toBe(`log: key ${r.token('sk-zzzzzzzz99')} here`);
  });

  it('changes nothing the second time (tokens are never matched again)', () => {
    const hexy = new Redactor({ key: 'k', patterns: ['[0-9a-f]{8,}'] });
    const once = hexy.redactJson(call({ text: 'id deadbeef00' }));
    expect(once.params.arguments.text).toMatch(/^id redacted:hmac-sha256:[0-9a-f]{16}$/);
    expect(hexy.redactJson(once)).toBe(once);
    expect(hexy.redactText(once.params.arguments.text)).toBe(once.params.arguments.text);
  });

  it('redacts the extra fields and headers named by the rules', () => {
    const more = new Redactor({ key: 'k', fields: ['session_key'], headers: ['x-tenant'] });
    expect(more.redactJson({ a: { session_key: 'v' } }).a.session_key).toMatch(TOKEN);
    expect(more.redactHeaders({ 'X-Tenant': 't1' })['X-Tenant']).toMatch(TOKEN);
  });

  it('applies the paths to span content, which is a part of the message', () => {
    const ex = { method: 'tools/call', request: call({ note: 'private words', text: 'hi' }), response: undefined, outcome: 'ok' } as unknown as Exchange;
    const attrs = contentAttributes(ex, { redact: (v, at) => r.redactContent(v, at), maxLength: 10_000, onError: () => {} });
    const args = JSON.parse(String(attrs['gen_ai.tool.call.arguments'])) as { note: string; text: string };
    expect(args).toEqual({ note: r.token('private words'), text: 'hi' });
  });
});

describe('parseRedactionRules', () => {
  it('reads YAML and JSON', () => {
    const yaml = 'version: 1\npaths: [/params/arguments/note]\nfields: [session_key]\nheaders: [X-Tenant]\npatterns: ["sk-[a-z]+"]\n';
    expect(parseRedactionRules(yaml, 'r.yaml')).toEqual({
      paths: ['/params/arguments/note'],
      fields: ['session_key'],
      headers: ['X-Tenant'],
      patterns: ['sk-[a-z]+'],
    });
    expect(parseRedactionRules('{"paths": ["/result/content/*/text"]}', 'r.json')).toEqual({ paths: ['/result/content/*/text'] });
  });

  it('accepts the examples of docs/redaction.md and the README', () => {
    for (const doc of ['docs/redaction.md', 'README.md']) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      const block = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => /^patterns:/m.test(b))!;
      const rules = parseRedactionRules(block, doc);
      expect(rules.paths!.length, doc).toBeGreaterThan(0);
      expect(rules.patterns!.length, doc).toBeGreaterThan(0);
    }
  });

  const problems = (text: string): string => {
    try {
      parseRedactionRules(text, 'rules.yaml');
    } catch (err) {
      expect(err).toBeInstanceOf(McptapError);
      expect((err as McptapError).code).toBe('MCPTAP_REDACT_RULES_INVALID');
      return (err as Error).message;
    }
    throw new Error('accepted');
  };

  it('says file:line: field: message for each problem', () => {
    const msg = problems(
      'version: 1\npaths:\n  - params/arguments\n  - /params\npatterns:\n  - "(a)\\\\1"\n  - "x(?=y)"\n  - "("\n  - "a*"\n  - "x{17}"\nheader: [x]\n',
    );
    expect(msg).toContain('rules.yaml:3: paths[0]: a JSON Pointer starts with "/"');
    expect(msg).toContain('rules.yaml:4: paths[1]: must point inside a message');
    expect(msg).toContain('rules.yaml:6: patterns[0]: cannot run in linear time: the backreference \\1 is not allowed');
    expect(msg).toContain('rules.yaml:7: patterns[1]: cannot run in linear time: the lookaround (?= is not allowed');
    expect(msg).toContain('rules.yaml:8: patterns[2]: not a valid regular expression');
    expect(msg).toContain('rules.yaml:9: patterns[3]: matches the empty string');
    expect(msg).toContain('rules.yaml:10: patterns[4]: cannot run in linear time: a counted repetition may repeat at most 16 times');
    expect(msg).toContain('rules.yaml:11: header: unknown field (did you mean "headers"?)');
  });

  it('refuses YAML that does not parse, with its line', () => {
    expect(problems('paths:\n  - /a/b\n  bad: [\n')).toMatch(/rules\.yaml:\d+: not valid YAML or JSON/);
  });
});
