/**
 * `mcptap ui`'s waterfall of a session with a long-lived stream: server-everything over Streamable
 * HTTP behind `mcptap http --record`, the SDK 1.x client's standalone GET stream carrying the
 * simulated log messages (notifications/message). A second session, without notifications on its
 * GET stream, has no long-lived stream: its waterfall draws no stream lane.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { CHROMIUM, closeContexts, sharedChromium } from '../helpers/browser.js';
import { recordEverythingThroughTap } from '../helpers/http-tap-cli.js';
import { get, startUi, type UiCli } from '../helpers/ui-cli.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { STREAM_TICK } from '../../web/waterfall.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-streams-'));
const db = join(dir, 'streams.db');

/** Sessions of the recording: one whose GET stream carried a log message, one quiet. */
const sessions = { streamed: '', quiet: '' };

async function record(): Promise<void> {
  await recordEverythingThroughTap(db, async (tapUrl) => {
    const quiet = new Client({ name: 'mcptap-ui-quiet', version: '1.0.0' });
    const quietTransport = new StreamableHTTPClientTransport(new URL(tapUrl));
    await quiet.connect(quietTransport);
    await quiet.callTool({ name: 'echo', arguments: { message: 'quiet' } });
    const client = new Client({ name: 'mcptap-ui-streams', version: '1.0.0' });
    // server-everything logs once at once (dropped if the GET stream is not open yet), then every 5 s:
    // wait (bounded) for two, so the stream's lane spans a while.
    let logs = 0;
    const logged = new Promise<void>((resolve) => client.setNotificationHandler(LoggingMessageNotificationSchema, () => void (++logs >= 2 && resolve())));
    const transport = new StreamableHTTPClientTransport(new URL(tapUrl));
    await client.connect(transport);
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      logged,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${logs} of 2 log messages on the GET stream in 20 s`)), 20_000))),
    ]);
    clearTimeout(timer);
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    await client.callTool({ name: 'echo', arguments: { message: 'after' } });
    sessions.streamed = transport.sessionId!;
    sessions.quiet = quietTransport.sessionId!;
    await client.close();
    await quiet.close();
  });
}

let ui: UiCli;
let cookie: string;

beforeAll(async () => {
  await record();
  ui = await startUi([db]);
  cookie = String((await get(ui.url)).headers['set-cookie']).split(';')[0]!;
}, 90_000);
afterAll(async () => {
  await ui?.stop();
});

interface Stream {
  connectionId: string;
  streamId: string;
  kind: string;
  firstMs: number;
  lastMs: number;
  notifications: number;
  notificationMs: number[];
}

const waterfall = async (query: string) => {
  const r = await get(`${ui.origin}api/waterfall?${query}`, { cookie });
  return JSON.parse(r.body) as { exchanges: unknown[]; streams: Stream[] };
};

describe('mcptap ui: a long-lived stream in the waterfall API', () => {
  it("the recording holds the streamed session's GET stream with its log messages, none of the quiet one", () => {
    const store = RecordingStore.open(db, { readOnly: true });
    try {
      const streams = store.longStreams(store.latestRecordingId()!);
      expect(streams).toHaveLength(1);
      expect(streams[0]).toMatchObject({ kind: 'get', connectionId: expect.stringContaining(sessions.streamed) });
      expect(streams[0]!.notifications).toBeGreaterThanOrEqual(2);
    } finally {
      store.close();
    }
  });

  it("a session's waterfall has its stream, spanning its notifications, each one's time given", async () => {
    const { streams, exchanges } = await waterfall(`session=${sessions.streamed}`);
    expect(exchanges.length).toBeGreaterThan(3);
    expect(streams).toHaveLength(1);
    const s = streams[0]!;
    expect(s.notificationMs).toHaveLength(s.notifications);
    expect(s.notificationMs[0]).toBe(s.firstMs);
    expect(s.notificationMs.at(-1)).toBe(s.lastMs);
    expect(s.lastMs).toBeGreaterThan(s.firstMs);
  });

  it("the quiet session's waterfall has no stream: not another session's", async () => {
    const { streams, exchanges } = await waterfall(`session=${sessions.quiet}`);
    expect(exchanges.length).toBeGreaterThan(1);
    expect(streams).toEqual([]);
  });
});

/** Pixels of the waterfall canvas in the tick colour of long-lived streams' notifications, within rows y0..y1 (CSS px). */
const tickPixels = (page: Page, y0: number, y1: number) =>
  page.evaluate(
    ([colour, from, to]) => {
      const c = document.getElementById('waterfall') as HTMLCanvasElement;
      const ratio = c.width / c.clientWidth;
      const img = c.getContext('2d')!.getImageData(0, Math.round(from * ratio), c.width, Math.round((to - from) * ratio)).data;
      const want = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16));
      let n = 0;
      for (let i = 0; i < img.length; i += 4) if (img[i] === want[0] && img[i + 1] === want[1] && img[i + 2] === want[2]) n++;
      return n;
    },
    [STREAM_TICK, y0, y1] as const,
  );

/** Opens the session's first exchange and draws its session's waterfall (bounded waits). */
async function sessionWaterfall(page: Page, session: string): Promise<void> {
  await page.fill('input[name=session]', session);
  // The filter applied: every row listed is of the session (each row names its session).
  await page.waitForFunction(
    (id) => {
      const rows = [...document.querySelectorAll('#table .row')];
      return rows.length > 0 && rows.every((r) => r.textContent?.includes(id));
    },
    session,
    { timeout: 10_000 },
  );
  await page.click('#table .row');
  await page.waitForSelector('#detail [data-testid=waterfall-session]', { timeout: 10_000 });
  await page.evaluate(() => document.getElementById('waterfall')!.removeAttribute('data-drawn'));
  await page.click('#detail [data-testid=waterfall-session]');
  await page.waitForSelector('#waterfall[data-drawn]', { timeout: 10_000 });
}

describe.skipIf(!CHROMIUM)('mcptap ui in headless Chromium: long-lived streams', () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await sharedChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(ui.url, { timeout: 30_000 });
    await page.waitForSelector('#table .row', { timeout: 15_000 });
  }, 90_000);
  afterAll(async () => {
    if (browser) await closeContexts(browser);
  });

  it('draws the stream as the top lane with its notifications ticked, listed and shown on hover', async () => {
    await sessionWaterfall(page, sessions.streamed);
    expect(await page.getAttribute('#waterfall', 'data-streams')).toBe('1');
    const { streams } = await waterfall(`session=${sessions.streamed}`);
    const items = await page.$$eval('#waterfall-streams [data-testid=waterfall-stream]', (li) =>
      li.map((l) => [l.getAttribute('data-notifications'), l.textContent ?? '']),
    );
    expect(items).toHaveLength(1);
    expect(items[0]![0]).toBe(String(streams[0]!.notifications));
    expect(items[0]![1]).toMatch(
      new RegExp(`^get stream ${streams[0]!.streamId} of .*${sessions.streamed}: ${streams[0]!.notifications} notifications from .* at `),
    );
    expect(await page.textContent('#waterfall-caption')).toContain('1 long-lived stream (');
    // The first lane (y 24..42) holds the ticks; the exchanges' lanes below hold none.
    expect(await tickPixels(page, 24, 42)).toBeGreaterThanOrEqual(2 * 2);
    expect(await tickPixels(page, 42, 42 + 18 * 4)).toBe(0);
    // Hovering the stream's lane shows it and its notifications; an exchange's lane shows no such title.
    await page.hover('#waterfall', { position: { x: 400, y: 33 } });
    expect(await page.getAttribute('#waterfall', 'title')).toBe(items[0]![1]);
    await page.hover('#waterfall', { position: { x: 400, y: 51 } });
    expect(await page.getAttribute('#waterfall', 'title')).toBe('');
  });

  it('a session without a long-lived stream draws no stream lane', async () => {
    await sessionWaterfall(page, sessions.quiet);
    expect(await page.getAttribute('#waterfall', 'data-streams')).toBe('0');
    expect(await page.$$('#waterfall-streams li')).toHaveLength(0);
    expect(await page.textContent('#waterfall-caption')).not.toContain('long-lived');
    expect(await tickPixels(page, 0, 24 + 18 * 3)).toBe(0);
  });
});
