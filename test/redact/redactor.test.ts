import { describe, expect, it } from 'vitest';
import { REDACT_KEY_ENV, Redactor, TOKEN_PREFIX, redactorFromEnv } from '../../src/redact/redactor.js';

const TOKEN = /^redacted:hmac-sha256:[0-9a-f]{16}$/;

describe('Redactor tokens', () => {
  it('maps equal secrets to equal tokens under one key, and differs across random keys', () => {
    const r = new Redactor();
    expect(r.token('s3cret')).toMatch(TOKEN);
    expect(r.token('s3cret')).toBe(r.token('s3cret'));
    expect(r.token('s3cret')).not.toBe(r.token('other'));
    expect(new Redactor().token('s3cret')).not.toBe(r.token('s3cret'));
  });

  it('gives comparable tokens across recordings when the key is configured (MCPTAP_REDACT_KEY)', () => {
    const a = redactorFromEnv({ [REDACT_KEY_ENV]: 'team-key' });
    const b = redactorFromEnv({ [REDACT_KEY_ENV]: 'team-key' });
    expect(a.token('x')).toBe(b.token('x'));
    expect(redactorFromEnv({}).token('x')).not.toBe(a.token('x'));
  });
});

describe('Redactor.redactHeaders', () => {
  it('redacts the default sensitive headers in any case, and configured ones', () => {
    const r = new Redactor({ key: 'k', headers: ['X-Upstream-Token'] });
    const h = {
      Authorization: 'Bearer abc',
      cookie: 'a=1',
      'set-cookie': ['a=1', 'b=2'],
      'Proxy-Authorization': 'Basic xyz',
      'x-api-key': 'k1',
      'x-upstream-token': 't',
      'mcp-session-id': 'sess',
      'content-type': 'application/json',
    };
    const out = r.redactHeaders(h);
    expect(out.Authorization).toBe(r.token('Bearer abc'));
    expect(out.cookie).toMatch(TOKEN);
    expect(out['set-cookie']).toEqual([r.token('a=1'), r.token('b=2')]);
    expect(out['Proxy-Authorization']).toMatch(TOKEN);
    expect(out['x-api-key']).toMatch(TOKEN);
    expect(out['x-upstream-token']).toMatch(TOKEN);
    expect(out['mcp-session-id']).toBe('sess');
    expect(out['content-type']).toBe('application/json');
    expect(h.Authorization).toBe('Bearer abc'); // input untouched
    expect(r.redactHeaders(out)).toEqual(out); // tokens are not re-hashed
  });
});

describe('Redactor.redactJson', () => {
  const r = new Redactor({ key: 'k', fields: ['x-secret-field'] });

  it('redacts exact field names case-insensitively, at any depth, but not look-alikes', () => {
    const v = {
      params: {
        arguments: { Password: 'p', nested: [{ TOKEN: 't' }], config: { client_secret: 'c', apiKey: 'a', api_key: 'b' } },
        _meta: { progressToken: 'pt' },
        cursor: 'c1',
        nextCursor: 'n1',
        tokens: 5,
        'x-secret-field': 'mine',
      },
      result: { access_token: 'at', refresh_token: 'rt', authorization: { scheme: 'bearer', value: 'v' }, secret: null },
    };
    const out = r.redactJson(v);
    expect(out.params.arguments.Password).toBe(r.token('p'));
    expect(out.params.arguments.nested[0]!.TOKEN).toBe(r.token('t'));
    expect(out.params.arguments.config).toEqual({ client_secret: r.token('c'), apiKey: r.token('a'), api_key: r.token('b') });
    expect(out.params._meta.progressToken).toBe('pt');
    expect(out.params.nextCursor).toBe('n1');
    expect(out.params.tokens).toBe(5);
    expect(out.params['x-secret-field']).toMatch(TOKEN);
    expect(out.result.access_token).toMatch(TOKEN);
    expect(out.result.refresh_token).toMatch(TOKEN);
    expect(out.result.authorization).toBe(r.token(JSON.stringify({ scheme: 'bearer', value: 'v' })));
    expect(out.result.secret).toBeNull();
    expect(v.params.arguments.Password).toBe('p'); // input untouched
  });

  it('returns the very same object when nothing matched (copy on write)', () => {
    const v = { a: [1, { b: 'c' }], progressToken: 'x' };
    expect(r.redactJson(v)).toBe(v);
  });
});

describe('Redactor.redactRaw', () => {
  const r = new Redactor({ key: 'k' });

  it('fast path: returns the same Buffer when no JSON key is sensitive, even if a value mentions one', () => {
    for (const s of [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"password","arguments":{"text":"my token is \\"password\\": x"}}}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}',
      '{"result":{"nextCursor":"abc"}}',
      'not json at all',
      '',
    ]) {
      const raw = Buffer.from(s);
      expect(r.redactRaw(raw)).toBe(raw);
    }
  });

  it('re-serialises redacted JSON when a key is sensitive', () => {
    const raw = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"x","params":{"password" : "p1", "keep":"k"}}');
    const out = r.redactRaw(raw);
    expect(out).not.toBe(raw);
    expect(JSON.parse(out.toString())).toEqual({ jsonrpc: '2.0', id: 1, method: 'x', params: { password: r.token('p1'), keep: 'k' } });
  });

  it('sees through escaped key names', () => {
    const raw = Buffer.from('{"params":{"pass\\u0077ord":"p1"}}');
    expect(JSON.parse(r.redactRaw(raw).toString())).toEqual({ params: { password: r.token('p1') } });
  });

  it('redacts batches and keys after long string values', () => {
    const raw = Buffer.from(
      JSON.stringify([
        { id: 1, text: 'x'.repeat(100_000) + '"quoted"' },
        { id: 2, Token: 'abc' },
      ]),
    );
    expect(JSON.parse(r.redactRaw(raw).toString())[1]).toEqual({ id: 2, Token: r.token('abc') });
  });

  it('matches plain keys in any case without decoding them, and decodes the keys that need it', () => {
    const mine = new Redactor({ key: 'k', fields: ['X-Secret-Field', 'contraseña'] });
    const cases: [string, string][] = [
      ['{"PASSWORD":"a"}', 'PASSWORD'],
      ['{"id":1,"Api_Key" :\t"b"}', 'Api_Key'],
      ['{"x-secret-FIELD":"c"}', 'x-secret-FIELD'],
      ['{"Contraseña":"d"}', 'Contraseña'], // a configured non-ASCII name
      ['{"to\u212Aen":"e"}', 'to\u212Aen'], // KELVIN SIGN lower-cases to k: "toKen" names `token`
      ['{"toKen":"f"}', 'toKen'], // the same, unescaped (UTF-8 bytes)
    ];
    for (const [json, key] of cases) {
      const raw = Buffer.from(json);
      expect(mine.mentionsSensitiveKey(raw)).toBe(true);
      const out = JSON.parse(mine.redactRaw(raw).toString()) as Record<string, string>;
      expect(Object.values(out).at(-1)).toMatch(/^redacted:hmac-sha256:/);
      expect(Object.keys(out).at(-1)).toBe(JSON.parse(`"${key}"`));
    }
    for (const json of ['{"passwords":1}', '{"Tokens":1}', '{"pass":"word"}', '{"a":"password","b":"token"}', '{"contrasena":1}']) {
      expect(mine.mentionsSensitiveKey(Buffer.from(json))).toBe(false);
    }
  });

  it('redacts truncated or invalid JSON textually', () => {
    const raw = Buffer.from('{"jsonrpc":"2.0","params":{"api_key": "abc", "password": "unterminat');
    const out = r.redactRaw(raw).toString();
    expect(out).not.toContain('abc');
    expect(out).not.toContain('unterminat');
    expect(out).toContain(`"api_key": "${r.token('abc')}"`);
  });
});

describe('Redactor.redactText', () => {
  const r = new Redactor({ key: 'k' });

  it('redacts key=value, key: value and Authorization schemes in free text, not look-alikes', () => {
    const out = r.redactText('start --token=abc123 password: hunter2 Authorization: Bearer xyz progressToken=keep');
    expect(out).not.toMatch(/abc123|hunter2|xyz/);
    expect(out).toContain(`token=${r.token('abc123')}`);
    expect(out).toContain(`Authorization: Bearer ${r.token('xyz')}`);
    expect(out).toContain('progressToken=keep');
    expect(r.redactText(out)).toBe(out); // idempotent
    expect(out.startsWith('start --')).toBe(true);
    expect(TOKEN_PREFIX).toBe('redacted:hmac-sha256:');
  });

  it('redacts names that end in a sensitive one, header lines, Digest credentials and URL passwords', () => {
    const lines = [
      'export GITHUB_TOKEN=gh1 MY_API_KEY=ak2 --auth-token at3 --github-token gt4',
      'Cookie: session=ck5; theme=dark',
      'Set-Cookie: sid=sc6; Path=/',
      'Authorization: Digest username="u", response="dg7"',
      'db postgres://admin:pw8@db.local/x and https://user:pw9@example.com/p',
    ];
    const out = r.redactText(lines.join('\n'));
    expect(out).not.toMatch(/gh1|ak2|at3|gt4|ck5|sc6|dg7|pw8|pw9/);
    expect(out).toContain(`GITHUB_TOKEN=${r.token('gh1')}`);
    expect(out).toContain(`--auth-token ${r.token('at3')}`);
    expect(out).toContain(`Cookie: ${r.token('session=ck5; theme=dark')}`);
    expect(out).toContain(`Authorization: Digest ${r.token('username="u", response="dg7"')}`);
    expect(out).toContain(`postgres://admin:${r.token('pw8')}@db.local/x`);
    expect(out.split('\n')).toHaveLength(5);
    expect(r.redactText(out)).toBe(out); // idempotent
    // Look-alikes stay: camelCase, a longer word, a URL without a password.
    const keep = 'progressToken=p1 max_tokens=100 tokenizer=t https://example.com/a?b=c user@host';
    expect(r.redactText(keep)).toBe(keep);
  });

  it('stays linear on text a server could craft against its patterns (no catastrophic backtracking)', () => {
    // 200 KB each. With a name allowed to start after any "_" or "-", or a URL scheme after any ".",
    // each of these took time quadratic in its length: 40 KB of "a_" took 4.7 s, these would take minutes.
    for (const unit of ['a_', 'a-', 'a.', 'a:']) {
      const text = unit.repeat(Math.ceil(200_000 / unit.length));
      expect(r.redactText(text)).toBe(text);
    }
    for (const unit of ['x_token=', '"password":', 'cookie:']) {
      const text = unit.repeat(Math.ceil(200_000 / unit.length));
      expect(r.redactText(text)).toContain(TOKEN_PREFIX);
    }
  });

  it('redacts a sensitive member whose value is an object or array in text that does not parse', () => {
    const text = '{"params":{"client_secret":{"k": "OBJ1", "z":"OBJ2"},"token":["ARR1","ARR2"],"note":"kept"';
    const out = r.redactText(text);
    expect(out).not.toMatch(/OBJ|ARR/);
    expect(out).toBe(`{"params":{"client_secret":"${r.token('{"k": "OBJ1", "z":"OBJ2"}')}","token":"${r.token('["ARR1","ARR2"]')}","note":"kept"`);
    // Cut short inside the value: the rest of the text is the value.
    expect(r.redactText('{"password":{"a":"cut')).toBe(`{"password":"${r.token('{"a":"cut')}"`);
  });

  it('redacts command-line flags with their value after a space, and - or _ inside names', () => {
    const cmd = 'node server.js --token SECRET1 -password "two words" --api-key SECRET3 --api_key=SECRET4 --verbose --token --stdio';
    const out = r.redactText(cmd);
    expect(out).not.toMatch(/SECRET|two words/);
    expect(out).toBe(
      `node server.js --token ${r.token('SECRET1')} -password ${r.token('two words')} --api-key ${r.token('SECRET3')} --api_key=${r.token('SECRET4')} --verbose --token --stdio`,
    );
    expect(r.redactText(out)).toBe(out); // idempotent
    // Prose is not a flag: only a dashed name takes the next word.
    expect(r.redactText('the token expired; password reset sent')).toBe('the token expired; password reset sent');
  });
});
