/**
 * `mcptap ui` with real peers: a recording made through `mcptap http --record` of the SDK 1.x client
 * and server-everything (Streamable HTTP: SSE events, progress, a caller's trace id, a tool named
 * `<script>`), served by the built CLI. Access (token, cookie, Host, Origin), the JSON API, and that
 * the file is never written.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { CHROMIUM, closeContexts, distinctColours, sharedChromium } from '../helpers/browser.js';
import { CALLER_TRACE, everythingCallSet } from '../helpers/everything-call-set.js';
import { recordEverythingThroughTap } from '../helpers/http-tap-cli.js';
import { ON_CI } from '../helpers/prometheus.js';
import { get, startUi, type UiCli } from '../helpers/ui-cli.js';
import { BIN, MCPTAP } from '../helpers/paths.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { silentLogger } from '../../src/util/logger.js';
import { T0, TrafficScript } from '../sinks/traffic-script.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');
const JAEGER = 'http://jaeger.invalid:16686';
export const EVIL_TOOL = '<script>window.__pwned=1</script>';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-'));
const db = join(dir, 'http.db');

/** Records the call set through the HTTP tap, plus a call of a tool named like a script tag. */
async function record(): Promise<void> {
  await recordEverythingThroughTap(db, async (tapUrl) => {
    const client = new Client({ name: 'mcptap-ui-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(tapUrl)));
    await everythingCallSet(client, []);
    await client.callTool({ name: EVIL_TOOL, arguments: {} }).catch(() => undefined);
    // A call the client cancels after its first progress: the recording holds the cancellation.
    const abort = new AbortController();
    await client
      .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 20 } }, CallToolResultSchema, {
        signal: abort.signal,
        onprogress: () => abort.abort('enough'),
      })
      .catch(() => undefined);
    await client.close();
  });
}

let ui: UiCli;
let cookie: string;
let before: { bytes: Buffer; mtimeMs: number };

beforeAll(async () => {
  await record();
  before = { bytes: readFileSync(db), mtimeMs: statSync(db).mtimeMs };
  ui = await startUi([db]);
  const first = await get(ui.url);
  cookie = String(first.headers['set-cookie']).split(';')[0]!;
}, 90_000);
afterAll(async () => {
  await ui?.stop();
});

const api = async (path: string) => {
  const r = await get(`${ui.origin}api/${path}`, { cookie });
  return { status: r.status, json: JSON.parse(r.body) as Record<string, unknown> };
};

describe('mcptap ui: access', () => {
  it('the token sets an HttpOnly SameSite=Strict cookie and redirects to the bare URL', async () => {
    const r = await get(ui.url);
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('/');
    // Never to another host, however the path is spelled.
    for (const path of ['/evil.example/', '\\evil.example/', '%2F%2Fevil.example/']) {
      const odd = await get(`${ui.origin}${path}?token=${ui.token}`);
      expect([odd.status, String(odd.headers.location).startsWith('/') && !/^\/[\/\\]/.test(String(odd.headers.location))], path).toEqual([302, true]);
    }
    expect(String(r.headers['set-cookie'])).toMatch(new RegExp(`^mcptap_ui_${new URL(ui.origin).port}=[\\w-]+; HttpOnly; SameSite=Strict; Path=/`));
  });

  it('a request target that is no URL on any base (//%5C/) is refused, and the server stays up', async () => {
    for (const path of ['/%5C/', '/[/', '/x:99999/', '/%/']) {
      const odd = await get(`${ui.origin}${path}`, { cookie });
      expect([400, 401, 404], path).toContain(odd.status);
    }
    expect((await get(ui.origin, { cookie })).status).toBe(200);
  });

  it('without token or cookie: 401; with a wrong one: 403; with the cookie: the page under a strict CSP', async () => {
    const refused = await get(ui.origin);
    expect(refused.status).toBe(401);
    // Refusals carry the page's headers too.
    expect([refused.headers['content-security-policy'], refused.headers['x-content-type-options']]).toEqual([
      expect.stringMatching(/^default-src 'self'/),
      'nosniff',
    ]);
    expect((await get(`${ui.origin}api/recordings`)).status).toBe(401);
    expect((await get(`${ui.origin}?token=wrong`)).status).toBe(403);
    expect((await get(ui.origin, { cookie: `mcptap_ui_${new URL(ui.origin).port}=wrong` })).status).toBe(403);
    const page = await get(ui.origin, { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/<title>mcptap ui<\/title>/);
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'self';/);
    expect((await get(`${ui.origin}app.js`, { cookie })).status).toBe(200);
  });

  it('refuses a foreign Host or Origin with 403, even with the cookie, and accepts loopback ones', async () => {
    const port = new URL(ui.origin).port;
    expect((await get(ui.origin, { cookie, host: `evil.example:${port}` })).status).toBe(403);
    expect((await get(ui.origin, { cookie, origin: 'http://evil.example' })).status).toBe(403);
    expect((await get(ui.origin, { cookie, host: `localhost:${port}` })).status).toBe(200);
    expect((await get(ui.origin, { cookie, origin: ui.origin.slice(0, -1) })).status).toBe(200);
  });

  it('serves GET only: a POST with the cookie is 405', async () => {
    expect((await get(`${ui.origin}api/recordings`, { cookie }, 'POST')).status).toBe(405);
    expect((await get(`${ui.origin}api/recordings`, { cookie })).status).toBe(200);
  });

  it('--open hands the URL with its token to the platform opener; without it, nothing is opened', async () => {
    // A stand-in xdg-open first on the PATH, writing what it was given.
    const bin = join(dir, 'bin');
    const opened = join(dir, 'opened.txt');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\necho "$1" > ${JSON.stringify(opened)}\n`, { mode: 0o755 });
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    const plain = await startUi([db], [], env);
    await plain.stop();
    expect(existsSync(opened)).toBe(false);
    const withOpen = await startUi([db], ['--open'], env);
    try {
      for (let i = 0; i < 100 && !existsSync(opened); i++) await new Promise((r) => setTimeout(r, 50));
      expect(readFileSync(opened, 'utf8').trim()).toBe(withOpen.url);
    } finally {
      await withOpen.stop();
    }
  });

  it('no request path reaches the file system: only the in-memory assets answer', async () => {
    for (const path of ['../package.json', '%2e%2e/%2e%2e/package.json', 'app.js.map', 'web/app.js', `..%2f..%2fetc%2fpasswd`]) {
      const r = await get(`${ui.origin}${path}`, { cookie });
      expect(r.status, path).toBe(404);
    }
  });
});

describe('mcptap ui: the JSON API', () => {
  it("names each file's latest recording without reading its exchanges", async () => {
    expect((await api('latest')).json).toEqual({ files: [{ file: 'http.db', latest: 1 }] });
  });

  it('lists the recording with transport, target and outcome counts', async () => {
    const { json } = await api('recordings');
    const [rec] = json.recordings as Record<string, unknown>[];
    expect(rec).toMatchObject({ file: 'http.db', recording: 1, transport: 'http' });
    expect((rec!.outcomes as Record<string, number>).ok).toBeGreaterThan(2);
  });

  it('pages exchanges with a cursor and filters them to a tool; a bad filter is 400', async () => {
    const page1 = await api('exchanges?limit=2');
    expect(page1.json.exchanges).toHaveLength(2);
    const page2 = await api(`exchanges?limit=2&cursor=${String(page1.json.cursor)}`);
    const rows = [...(page1.json.exchanges as { row: number }[]), ...(page2.json.exchanges as { row: number }[])].map((x) => x.row);
    expect(new Set(rows).size).toBe(4);
    const echo = await api('exchanges?tool=echo');
    expect((echo.json.exchanges as { target: string }[]).map((x) => x.target)).toEqual(['echo']);
    expect((await api('exchanges?outcome=nonsense')).status).toBe(400);
    expect((await api('exchanges?minMs=-1')).status).toBe(400);
  });

  it('sorts by duration, slowest first, page by page with a cursor', async () => {
    const all = (await api('exchanges?sort=duration&limit=200')).json.exchanges as { row: number; latencyMs: number }[];
    expect(all.length).toBeGreaterThan(4);
    const latencies = all.map((x) => x.latencyMs);
    expect(latencies).toEqual([...latencies].sort((a, b) => b - a));
    const paged: { row: number }[] = [];
    let cursor: string | undefined;
    do {
      const page = await api(`exchanges?sort=duration&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      paged.push(...(page.json.exchanges as { row: number }[]));
      cursor = page.json.cursor as string | undefined;
    } while (cursor !== undefined);
    expect(paged.map((x) => x.row)).toEqual(all.map((x) => x.row));
    expect((await api('exchanges?sort=duration&cursor=12')).status).toBe(400);
    // A page size is a positive integer in either order.
    for (const sort of ['time', 'duration'])
      for (const limit of ['1.5', '0']) expect((await api(`exchanges?sort=${sort}&limit=${limit}`)).status, `${sort} ${limit}`).toBe(400);
  });

  it('gives one exchange with its request, response, SSE events, progress and the caller trace id', async () => {
    const long = await api('exchanges?tool=trigger-long-running-operation');
    const row = (long.json.exchanges as { row: number }[])[0]!.row;
    const { json } = await api(`exchange?row=${row}`);
    expect(json.request).toMatchObject({ method: 'tools/call', params: { name: 'trigger-long-running-operation' } });
    expect(json.response).toMatchObject({ result: {} });
    expect((json.sseEventsMs as number[]).length).toBeGreaterThan(1);
    expect((json.progress as unknown[]).length).toBe(3);
    const echoRow = ((await api('exchanges?tool=echo')).json.exchanges as { row: number }[])[0]!.row;
    expect((await api(`exchange?row=${echoRow}`)).json.traceId).toBe(CALLER_TRACE);
    expect((await api('exchange?row=999999')).status).toBe(404);
  });

  it('draws a connection from its exchanges: a waterfall of the session', async () => {
    const first = (await api('exchanges?limit=1')).json.exchanges as { connection: string }[];
    const { json } = await api(`waterfall?connection=${encodeURIComponent(first[0]!.connection)}`);
    expect((json.exchanges as unknown[]).length).toBeGreaterThan(3);
    expect((await api('waterfall')).status).toBe(400);
  });

  it('with several files: lists each, names a file by its label, never by a path', async () => {
    const two = await startUi([db, db]);
    try {
      const c = String((await get(two.url)).headers['set-cookie']).split(';')[0]!;
      const call = async (path: string) => {
        const r = await get(`${two.origin}api/${path}`, { cookie: c });
        return { status: r.status, json: JSON.parse(r.body) as Record<string, unknown> };
      };
      expect((await call('recordings')).json.files).toEqual(['http.db', 'http.db#2']);
      // Its cookie opens it, not the other explorer on the same host (cookies ignore ports: the name holds it).
      expect((await get(`${ui.origin}api/recordings`, { cookie: c })).status).toBe(401);
      expect((await call('exchanges?file=http.db%232&limit=1')).status).toBe(200);
      const unnamed = await call('exchanges');
      expect([unnamed.status, unnamed.json.error]).toEqual([400, expect.stringMatching(/name the file/)]);
      const path = await call(`exchanges?file=${encodeURIComponent(db)}`);
      expect([path.status, path.json.error]).toEqual([400, expect.stringMatching(/no file .* is open/)]);
    } finally {
      await two.stop();
    }
  });
});

if (!CHROMIUM) {
  if (ON_CI) throw new Error('chromium is missing on CI: .ci/run installs the Debian package `chromium`');
  console.warn('ui browser tests: SKIPPED: no `chromium` on PATH (apt-get install chromium to run them)');
}

/** Every request the page made, and its script errors. */
interface Watched {
  page: Page;
  requests: string[];
  errors: string[];
}

/** A page in a context of its own (no cookie, storage or cache shared with the others). */
async function openUi(browser: Browser, url: string): Promise<Watched> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => (m.type() === 'error' ? errors.push(`console: ${m.text()}`) : undefined));
  await page.goto(url, { timeout: 30_000 });
  await page.waitForSelector('body[data-ready]', { timeout: 15_000 });
  await page.waitForSelector('#table .row', { timeout: 15_000 });
  await page.waitForSelector('#recording-list tr[data-recording]', { timeout: 15_000 });
  return { page, requests, errors };
}

/** Waits (bounded) until the table shows rows, all of this tool: a filter has been applied. */
async function onlyTargets(page: Page, tool: string): Promise<void> {
  await page.waitForFunction(
    (t) => {
      const cells = [...document.querySelectorAll('#table .row .target')];
      return cells.length > 0 && cells.every((c) => c.textContent === t);
    },
    tool,
    { timeout: 10_000 },
  );
}

/** The exchange count the recordings list shows for the (first) recording. */
const listedExchanges = (page: Page) => page.$eval('#recording-list tr[data-recording] td:nth-child(7)', (td) => Number(td.textContent));

/** The tool / target column of the rows in the DOM. */
const targets = (page: Page) => page.$$eval('#table .row .target', (cells) => cells.map((c) => c.textContent ?? ''));

describe.skipIf(!CHROMIUM)('mcptap ui in headless Chromium', () => {
  let browser: Browser;
  let w: Watched;
  beforeAll(async () => {
    browser = await sharedChromium();
    w = await openUi(browser, ui.url);
  }, 90_000);
  afterAll(async () => {
    if (browser) await closeContexts(browser);
  });

  it('lands on the bare URL and lists the recording and its exchanges', async () => {
    expect(w.page.url()).toBe(ui.origin);
    expect(await w.page.textContent('#recording-list')).toMatch(/http\.db.*http/);
    expect(await targets(w.page)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
  });

  it('filters to a tool: only its exchanges remain', async () => {
    await w.page.fill('input[name=tool]', 'echo');
    await onlyTargets(w.page, 'echo');
    expect(await targets(w.page)).toEqual(['echo']);
    await w.page.fill('input[name=tool]', '');
    await w.page.waitForFunction(() => document.querySelectorAll('#table .row').length > 2, undefined, { timeout: 10_000 });
  });

  it('opens an exchange: its request, response and SSE events', async () => {
    await w.page.fill('input[name=tool]', 'trigger-long-running-operation');
    await onlyTargets(w.page, 'trigger-long-running-operation');
    await w.page.click('#table .row');
    await w.page.waitForSelector('#detail [data-testid=response]', { timeout: 10_000 });
    expect(await w.page.textContent('#detail [data-testid=request]')).toContain('"trigger-long-running-operation"');
    expect(await w.page.textContent('#detail [data-testid=response]')).toContain('"content"');
    const events = await w.page.$$eval('#detail [data-testid=events] li', (li) => li.map((l) => l.textContent ?? ''));
    expect(events.filter((e) => / SSE$/.test(e)).length).toBeGreaterThan(1);
    expect(events.filter((e) => /progress \d/.test(e))).toHaveLength(3);
  });

  it('draws the connection as a waterfall in several colours', async () => {
    await w.page.click('#detail [data-testid=waterfall-connection]');
    await w.page.waitForSelector('#waterfall[data-drawn]', { timeout: 10_000 });
    expect(Number(await w.page.getAttribute('#waterfall', 'data-drawn'))).toBeGreaterThan(3);
    // A drawn waterfall: bars in several hues, ticks, text (anti-aliased); a blank canvas has one colour.
    const shot = await (await w.page.$('#waterfall'))!.screenshot({ timeout: 30_000 });
    expect(distinctColours(shot)).toBeGreaterThan(20);
    // The measure told the other way: a blank canvas of the same size has one or two colours.
    await w.page.evaluate(() => {
      const c = document.createElement('canvas');
      const drawn = document.getElementById('waterfall') as HTMLCanvasElement;
      c.id = 'blank';
      c.width = drawn.width;
      c.height = drawn.height;
      c.getContext('2d')!.fillRect(0, 0, 1, 1);
      document.body.append(c);
    });
    expect(distinctColours(await (await w.page.$('#blank'))!.screenshot({ timeout: 30_000 }))).toBeLessThanOrEqual(2);
    await w.page.evaluate(() => document.getElementById('blank')!.remove());
    // A click on a lane opens its exchange (lanes top to bottom in row order: the third is row 3); above the lanes, nothing.
    const before = await w.page.getAttribute('#detail', 'data-row');
    await w.page.click('#waterfall', { position: { x: 400, y: 8 } });
    expect(await w.page.getAttribute('#detail', 'data-row')).toBe(before);
    await w.page.click('#waterfall', { position: { x: 400, y: 24 + 18 * 2 + 9 } });
    await w.page.waitForFunction(() => document.querySelector('#detail')?.getAttribute('data-row') === '3', undefined, { timeout: 10_000 });
  });

  it('shows the cancellation of a call the client cancelled', async () => {
    await w.page.fill('input[name=tool]', '');
    await w.page.selectOption('select[name=outcome]', 'cancelled');
    await w.page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('#table .row')];
        return rows.length > 0 && rows.every((r) => /cancelled \(by \w+\)/.test(r.textContent ?? ''));
      },
      undefined,
      { timeout: 10_000 },
    );
    // Who cancelled as the tap saw it (over HTTP the SDK's abort also drops the stream: `disconnect`).
    const by = /cancelled \(by (\w+)\)/.exec((await w.page.textContent('#table .row'))!)![1]!;
    await w.page.click('#table .row');
    await w.page.waitForSelector('#detail [data-testid=cancel]', { timeout: 10_000 });
    expect(await w.page.textContent('#detail [data-testid=cancel]')).toContain(`by${by}`);
    expect(await w.page.$$eval('#detail [data-testid=events] li', (li) => li.map((l) => l.textContent ?? ''))).toContainEqual(
      expect.stringMatching(new RegExp(`cancel \\(${by}\\)$`)),
    );
    // An exchange that was not cancelled has no such section.
    await w.page.selectOption('select[name=outcome]', 'ok');
    await w.page.waitForFunction(() => [...document.querySelectorAll('#table .row')].every((r) => !r.textContent?.includes('cancelled')), undefined, {
      timeout: 10_000,
    });
    await w.page.click('#table .row');
    await w.page.waitForFunction(() => !document.querySelector('#detail [data-testid=cancel]'), undefined, { timeout: 10_000 });
    await w.page.selectOption('select[name=outcome]', '');
  });

  it('shows a tool named <script> as text: no element made, nothing run', async () => {
    await w.page.fill('input[name=tool]', EVIL_TOOL);
    await onlyTargets(w.page, EVIL_TOOL);
    await w.page.click('#table .row');
    await w.page.waitForFunction((evil) => document.querySelector('#detail h2')?.textContent?.includes(evil), EVIL_TOOL, { timeout: 10_000 });
    expect(await w.page.evaluate('window.__pwned')).toBeUndefined();
    // The one script element is the page's own.
    expect(await w.page.$$eval('script', (s) => s.map((x) => x.getAttribute('src')))).toEqual(['/app.js']);
  });

  it('shows the trace id of the caller, with no Jaeger link when no --jaeger was given', async () => {
    await w.page.fill('input[name=tool]', 'echo');
    await onlyTargets(w.page, 'echo');
    await w.page.click('#table .row');
    await w.page.waitForSelector('#detail [data-testid=trace]', { timeout: 10_000 });
    expect(await w.page.textContent('#detail [data-testid=trace] code')).toBe(CALLER_TRACE);
    expect(await w.page.$$('#detail [data-testid=trace] a')).toHaveLength(0);
  });

  it('made no request outside its own origin, and no script error', () => {
    expect(w.requests.some((r) => r.startsWith(`${ui.origin}api/exchange?`))).toBe(true);
    expect(w.requests.filter((r) => !r.startsWith(ui.origin))).toEqual([]);
    expect(w.errors).toEqual([]);
  });

  it('its CSP refuses a request outside the origin, and allows one to it', async () => {
    const tryFetch = (url: string) =>
      w.page.evaluate(
        (u) =>
          fetch(u, { credentials: 'same-origin' }).then(
            (r) => `status ${r.status}`,
            () => 'refused',
          ),
        url,
      );
    expect(await tryFetch('http://example.invalid/x')).toBe('refused');
    // Refused by the policy itself (not by DNS): the page sees the violation.
    const violation = await w.page.evaluate(
      () =>
        new Promise<string>((resolve) => {
          document.addEventListener('securitypolicyviolation', (e) => resolve(`${e.effectiveDirective} ${e.blockedURI}`), { once: true });
          void fetch('http://example.invalid/y').catch(() => undefined);
          setTimeout(() => resolve('no violation'), 5000);
        }),
    );
    expect(violation).toMatch(/^connect-src http:\/\/example\.invalid/);
    expect(await tryFetch('/api/recordings')).toBe('status 200');
    expect(w.requests.filter((r) => r.includes('example.invalid'))).toEqual([]);
    w.errors.length = 0; // the refusal is logged as a console error, on purpose
  });
});

describe.skipIf(!CHROMIUM)('mcptap ui: live tail of a recording a running tap writes', () => {
  it('shows an exchange the tap records after the page opened, without a reload', async () => {
    const live = join(dir, 'live.db');
    const tapped = await connectThroughTap(['--record', live, '--require-recording'], [EVERYTHING, 'stdio']);
    let liveUi: UiCli | undefined;
    const browser = await sharedChromium();
    try {
      await tapped.client.callTool({ name: 'echo', arguments: { message: 'before the page' } });
      // Bounded wait until the tap's indexer has the echo in the file (the page then has a row to show).
      for (let i = 0; i < 200 && !recorded(live, 'echo'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(recorded(live, 'echo')).toBe(true);
      liveUi = await startUi([live]);
      const w = await openUi(browser, liveUi.url);
      await w.page.waitForFunction(() => [...document.querySelectorAll('#table .row .target')].some((c) => c.textContent === 'echo'), undefined, {
        timeout: 10_000,
      });
      expect(await targets(w.page)).not.toContain('get-sum');
      const listedBefore = await listedExchanges(w.page);
      await tapped.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
      const answered = Date.now();
      // The event itself, bounded: the row appears by the page's own polling (no reload, no click).
      await w.page.waitForFunction(() => [...document.querySelectorAll('#table .row .target')].some((c) => c.textContent === 'get-sum'), undefined, {
        timeout: 10_000,
        polling: 50,
      });
      console.log(`ui live tail: get-sum shown ${Date.now() - answered} ms after its answer reached the client`);
      // The recordings list follows too (read again every few seconds while the recording is being written).
      await w.page.waitForFunction((n) => Number(document.querySelector('#recording-list tr[data-recording] td:nth-child(7)')?.textContent) > n, listedBefore, {
        timeout: 10_000,
      });
      // A call still in flight: its row, once shown, ends as ok without a reload (pending rows are read again).
      const outcomes: string[] = [];
      await w.page.exposeFunction('seenOutcome', (o: string) => outcomes.push(o));
      const slow = tapped.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1.5, steps: 3 } });
      await w.page.waitForFunction(
        () => {
          const row = [...document.querySelectorAll('#table .row')].find((r) => r.querySelector('.target')?.textContent === 'trigger-long-running-operation');
          const outcome = row?.children[4]?.textContent;
          if (outcome) (window as unknown as { seenOutcome(o: string): void }).seenOutcome(outcome);
          return outcome === 'ok';
        },
        undefined,
        { timeout: 15_000, polling: 50 },
      );
      await slow;
      // The call lasts 1.5 s and the page polls every 400 ms: its row is first seen in flight.
      expect([...new Set(outcomes)]).toEqual(['pending', 'ok']);
      expect(w.requests.filter((r) => !r.startsWith(liveUi!.origin))).toEqual([]);
    } finally {
      await closeContexts(browser);
      await liveUi?.stop();
      await tapped.close();
    }
  }, 90_000);
});

describe.skipIf(!CHROMIUM)('mcptap ui: a recording begun in the file after the page opened', () => {
  it('is listed without a reload; a file that gets none keeps its list', async () => {
    const grows = join(dir, 'grows.db');
    const first = await connectThroughTap(['--record', grows], [EVERYTHING, 'stdio']);
    await first.client.callTool({ name: 'echo', arguments: { message: 'run 1' } });
    await first.close();
    for (let i = 0; i < 200 && !recorded(grows, 'echo'); i++) await new Promise((r) => setTimeout(r, 50));
    const grownUi = await startUi([grows]);
    const browser = await sharedChromium();
    const rows = (page: Page) => page.$$eval('#recording-list tr[data-recording]', (trs) => trs.length);
    try {
      const w = await openUi(browser, grownUi.url);
      await w.page.waitForFunction(() => document.querySelectorAll('#recording-list tr[data-recording]').length === 1, undefined, { timeout: 10_000 });
      // A list poll (every 3 s) with nothing new: still one row.
      await new Promise((r) => setTimeout(r, 3_500));
      expect(await rows(w.page)).toBe(1);
      const second = await connectThroughTap(['--record', grows, '--require-recording'], [EVERYTHING, 'stdio']);
      try {
        await second.client.callTool({ name: 'echo', arguments: { message: 'run 2' } });
        // The event, bounded: the second recording's row appears by the page's own polling.
        await w.page.waitForFunction(() => document.querySelectorAll('#recording-list tr[data-recording]').length === 2, undefined, { timeout: 15_000 });
      } finally {
        await second.close();
      }
    } finally {
      await closeContexts(browser);
      await grownUi.stop();
    }
  }, 90_000);
});

/** Whether the file holds a finished exchange of this tool (what the tap's indexer has written so far). */
function recorded(file: string, tool: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const store = RecordingStore.open(file, { readOnly: true });
    try {
      return store.exchanges({ target: tool }).some((e) => e.state !== 'started');
    } finally {
      store.close();
    }
  } catch {
    return false;
  }
}

describe.skipIf(!CHROMIUM)('mcptap ui --replay: recorded and replayed answers side by side', () => {
  it('marks the differing pointers of a real replay against another server, and none of an exchange that stayed the same', async () => {
    const result = join(dir, 'replay.json');
    // Replayed against mcptap's reference server: its echo answers differently (and tools/list, initialize).
    const replay = spawnSync(process.execPath, [MCPTAP, 'replay', db, '--json', result, '--', process.execPath, MCPTAP, 'reference', '--stdio'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(existsSync(result), replay.stderr).toBe(true);
    const report = JSON.parse(readFileSync(result, 'utf8')) as { exchanges: { exchange: number; tool?: string; differences: { path?: string }[] }[] };
    const echo = report.exchanges.find((x) => x.tool === 'echo')!;
    const same = report.exchanges.find((x) => x.differences.length === 0)!;
    expect(echo.differences.map((d) => d.path)).toContain('/result/content/0/text');
    const replayUi = await startUi([db], ['--replay', result, '--jaeger', JAEGER]);
    const browser = await sharedChromium();
    try {
      const w = await openUi(browser, replayUi.url);
      await w.page.click(`#table .row[data-row="${echo.exchange}"]`);
      await w.page.waitForSelector('#detail [data-testid=replay]', { timeout: 10_000 });
      const marked = (side: string) =>
        w.page.$$eval(`#detail [data-testid=${side}] .diff`, (els) => els.map((e) => [e.getAttribute('data-pointer'), e.textContent ?? '']));
      const recordedMarks = await marked('recorded');
      const replayedMarks = await marked('replayed');
      const recordedText = recordedMarks.find(([p]) => p === '/result/content/0/text');
      const replayedText = replayedMarks.find(([p]) => p === '/result/content/0/text');
      expect(recordedText?.[1]).toMatch(/hi/);
      expect(replayedText).toBeDefined();
      expect(replayedText![1]).not.toBe(recordedText![1]);
      // The exchange that stayed the same: marked so in the table, no replay differences in its detail.
      expect(await w.page.textContent(`#table .row[data-row="${same.exchange}"]`)).toContain('replay same');
      expect(await w.page.textContent(`#table .row[data-row="${echo.exchange}"]`)).toContain('replay different');
      await w.page.click(`#table .row[data-row="${same.exchange}"]`);
      await w.page.waitForFunction((row) => document.querySelector('#detail')?.getAttribute('data-row') === String(row), same.exchange, { timeout: 10_000 });
      expect(await w.page.$$('#detail .diff')).toHaveLength(0);
      // With --jaeger, the echo's trace id links to Jaeger (never fetched: only followed when clicked).
      await w.page.click(`#table .row[data-row="${echo.exchange}"]`);
      await w.page.waitForSelector('#detail [data-testid=trace] a', { timeout: 10_000 });
      expect(await w.page.getAttribute('#detail [data-testid=trace] a', 'href')).toBe(`${JAEGER}/trace/${CALLER_TRACE}`);
      expect(w.requests.filter((r) => !r.startsWith(replayUi.origin))).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await closeContexts(browser);
      await replayUi.stop();
    }
  }, 90_000);
});

describe('mcptap ui: bad command lines', () => {
  const ui = (...args: string[]) => spawnSync(process.execPath, [MCPTAP, 'ui', ...args], { encoding: 'utf8', timeout: 30_000 });

  it('exits 4 on a file that is not a recording or a --replay that is not a replay result, 2 on a bad --listen', () => {
    const notJson = join(dir, 'not-a-replay.json');
    writeFileSync(notJson, '{"hello": 1}');
    expect(ui(db, '--replay', notJson).status).toBe(4);
    expect(ui(db, '--replay', notJson).stderr).toMatch(/MCPTAP_UI_BAD_REPLAY|not the JSON of `mcptap replay --json`/);
    expect(ui(join(dir, 'missing.db')).status).toBe(4);
    expect(ui(db, '--listen', 'nonsense').status).toBe(2);
    expect(ui(db, '--jaeger', 'ftp://x').status).toBe(2);
  });
});

describe.skipIf(!CHROMIUM)('mcptap ui: virtual scrolling of a long recording', () => {
  it('keeps only the rows in view in the page, and fetches the next page as the view nears the end', async () => {
    const long = join(dir, 'long.db');
    await longRecording(long, 3000);
    const longUi = await startUi([long]);
    const browser = await sharedChromium();
    try {
      const w = await openUi(browser, longUi.url);
      const state = () =>
        w.page.$eval('#table', (t) => ({
          loaded: Number(t.getAttribute('data-loaded')),
          rendered: Number(t.getAttribute('data-rendered')),
          rows: [...t.querySelectorAll('.row')].map((r) => Number(r.getAttribute('data-row'))),
        }));
      await w.page.waitForFunction(() => Number(document.querySelector('#table')?.getAttribute('data-loaded')) >= 200, undefined, { timeout: 10_000 });
      const first = await state();
      expect(first.loaded).toBe(200); // one page, not the recording
      expect(first.rendered).toBeLessThan(50); // the view (420 px / 22 px) and a margin of 10 each side
      expect(first.rows[0]).toBe(1);
      // Scroll to the end of what is loaded: the next page comes, and the rows in the page move with the view.
      await w.page.$eval('#table', (t) => (t.scrollTop = t.scrollHeight));
      await w.page.waitForFunction(() => Number(document.querySelector('#table')?.getAttribute('data-loaded')) >= 400, undefined, { timeout: 10_000 });
      const scrolled = await state();
      expect(scrolled.rendered).toBeLessThan(50);
      expect(Math.min(...scrolled.rows)).toBeGreaterThan(150);
      expect(scrolled.rows).not.toContain(1);
      expect(w.errors).toEqual([]);
    } finally {
      await closeContexts(browser);
      await longUi.stop();
    }
  }, 90_000);
});

// Last, after every test above browsed, filtered, replayed and tailed it.
describe('mcptap ui: the recording after all the browsing', () => {
  it('was never written (same bytes, same mtime)', () => {
    expect(statSync(db).mtimeMs).toBe(before.mtimeMs);
    expect(readFileSync(db).equals(before.bytes)).toBe(true);
  });

  it('the check can fail: a copy written through SQLite differs from its bytes before', () => {
    const copy = join(dir, 'copy.db');
    copyFileSync(db, copy);
    const bytes = readFileSync(copy);
    const sqlite = new BetterSqlite3(copy);
    sqlite.exec('CREATE TABLE written (x)');
    sqlite.close();
    expect(readFileSync(copy).equals(bytes)).toBe(false);
  });
});

/** A recording of `n` tools/call exchanges of one connection, written in process by the recorder. */
async function longRecording(path: string, n: number): Promise<void> {
  const s = new TrafficScript('c1').open({ transport: 'stdio', target: 'srv' }, 0);
  s.handshake(0);
  for (let i = 1; i <= n; i++) {
    s.request(i, 'tools/call', { name: `tool-${i % 5}`, arguments: {} }, 10 + i);
    s.result(i, { content: [] }, 10 + i + (i % 7));
  }
  const recording = { transport: 'stdio' as const, target: 'srv', startedUs: T0, mcptapVersion: '0.1.0-test' };
  const rec = new SqliteRecorder({ path, recording, logger: silentLogger, clock: { nowUs: () => T0 + 10_000_000 } });
  for (const e of s.events) rec.onEvent(e);
  await rec.close();
}
