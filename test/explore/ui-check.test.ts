/**
 * `mcptap ui --check` with real peers: a scripted raw server's schema breaches recorded through the
 * built `mcptap stdio --record`, the real `mcptap check --json` of it, and the built UI in headless
 * Chromium: the findings panel lists them by rule, a click opens the exchange with its findings and
 * the pointer marked, and the same finding checked live among its anomalies; a clean session's check shows "no findings" and no marks; a bad file exits 4.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, closeContexts, sharedChromium } from '../helpers/browser.js';
import { MCPTAP } from '../helpers/paths.js';
import { startUi, type UiCli } from '../helpers/ui-cli.js';
import { mcptap, recordSearch, SEARCH_OK, SEARCH_TOOL } from '../check/scripted-session.js';
import { indexCheck, findingsOf } from '../../src/explore/ui-check.js';
import { McptapError } from '../../src/errors.js';

interface CheckedFinding {
  ruleId: string;
  pointer?: string;
  where: { row?: number; side?: string };
}

const dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-check-'));
let breached: string;
let clean: string;

/** `mcptap check FILE --json OUT`, the JSON it wrote. */
function checkJson(db: string, out: string): { findings: CheckedFinding[] } {
  const r = mcptap('check', db, '--json', out);
  expect(r.code === 0 || r.code === 1, r.err).toBe(true);
  return JSON.parse(readFileSync(out, 'utf8')) as { findings: CheckedFinding[] };
}

beforeAll(async () => {
  // A tool without inputSchema (two rules at /result/tools/0/inputSchema, absent) and isError as a
  // string (one at /result/isError); checked live too (`mcptap stdio --check`), so the recording
  // holds them as anomalies of kind check.
  const rules = join(dir, 'rules.yaml');
  writeFileSync(rules, 'rules: {}\n');
  const { inputSchema: _dropped, ...toolWithoutSchema } = SEARCH_TOOL;
  breached = await recordSearch(dir, 'breached', toolWithoutSchema, { ...SEARCH_OK, isError: 'true' }, ['--check', rules]);
  clean = await recordSearch(dir, 'clean', SEARCH_TOOL, SEARCH_OK);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('indexCheck', () => {
  const finding = { ruleId: 'r', severity: 'error', message: 'm', where: { row: 3 } };

  it('indexes one recording or several by number, and finds an exchange by row or key', () => {
    expect(indexCheck({ file: 'a.db', recording: 2, findings: [finding] }, 'c.json').recordings.get(2)).toEqual([finding]);
    const several = indexCheck(
      {
        file: 'a.db',
        verdict: {},
        recordings: [
          { file: 'a.db', recording: 1, findings: [] },
          { file: 'a.db', recording: 2, findings: [finding] },
        ],
      },
      'c.json',
    );
    expect([...several.recordings.keys()]).toEqual([1, 2]);
    const byKey = { ...finding, where: { exchangeKey: 'k' } };
    expect(findingsOf([finding, byKey], 3, 'x')).toEqual([finding]);
    expect(findingsOf([finding, byKey], 4, 'k')).toEqual([byKey]);
  });

  it('refuses what is not a check result, naming the file', () => {
    for (const bad of [
      null,
      [],
      { file: 'x' },
      { recording: 1, findings: [] },
      { file: 'x', recordings: [{ findings: [] }] },
      { file: 'x', recording: 1, findings: [{ ruleId: 'r' }] },
    ]) {
      expect(() => indexCheck(bad, 'c.json')).toThrow(McptapError);
      expect(() => indexCheck(bad, 'c.json')).toThrow(/c\.json/);
    }
  });
});

describe('mcptap ui --check: bad files', () => {
  const ui = (...args: string[]) => spawnSync(process.execPath, [MCPTAP, 'ui', ...args], { encoding: 'utf8', timeout: 30_000 });

  it('exits 4 (MCPTAP_UI_BAD_CHECK), naming the file, on a file that is not JSON or not a check result', () => {
    const notJson = join(dir, 'not-json.json');
    const notCheck = join(dir, 'replay-like.json');
    writeFileSync(notJson, '{');
    writeFileSync(notCheck, '{"file": "x.db", "exchanges": []}');
    for (const f of [notJson, notCheck, join(dir, 'missing.json')]) {
      const r = ui(breached, '--check', f, '--listen', '127.0.0.1:0');
      expect(r.status, r.stderr).toBe(4);
      expect(r.stderr).toMatch(/cannot read --check|is not the JSON of `mcptap check --json`/);
      expect(r.stderr).toContain(f);
    }
  });
});

describe('mcptap ui --check: a check of another file', () => {
  it('is shown beside the first file, with a warning naming both', async () => {
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ file: '/elsewhere/other.db', recording: 1, findings: [] }));
    const ui = await startUi([breached], ['--check', other]);
    try {
      expect(ui.stderr()).toContain(`--check is of /elsewhere/other.db: none of the files given is /elsewhere/other.db; shown beside ${breached}`);
    } finally {
      await ui.stop();
    }
  });
});

if (!CHROMIUM) console.warn('ui --check browser tests: SKIPPED: no `chromium` on PATH');

async function open(browser: Browser, ui: UiCli): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => (m.type() === 'error' ? errors.push(`console: ${m.text()}`) : undefined));
  await page.goto(ui.url, { timeout: 30_000 });
  await page.waitForSelector('body[data-ready]', { timeout: 15_000 });
  await page.waitForSelector('#findings:not([hidden]) h2', { timeout: 15_000 });
  return { page, errors };
}

describe.skipIf(!CHROMIUM)('mcptap ui --check in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await sharedChromium();
  }, 60_000);
  afterAll(async () => {
    if (browser) await closeContexts(browser);
  });

  it('lists the findings by rule; a click opens the exchange with its findings and the pointer marked', async () => {
    const report = checkJson(breached, join(dir, 'breached.json'));
    const target = report.findings.find((f) => f.pointer === '/result/isError');
    expect(target, JSON.stringify(report.findings)).toBeDefined();
    const row = target!.where.row!;
    const ui = await startUi([breached], ['--check', join(dir, 'breached.json')]);
    try {
      const { page, errors } = await open(browser, ui);
      // Grouped by rule: a heading per rule, every finding listed under its own.
      const groups = await page.$$eval('#findings .rule', (divs) =>
        divs.map((d) => [...d.querySelectorAll('li.finding')].map((li) => li.getAttribute('data-rule'))),
      );
      const ruleIds = [...new Set(report.findings.map((f) => f.ruleId))];
      expect(ruleIds.length).toBeGreaterThan(1);
      expect(groups.map((g) => g[0])).toEqual(ruleIds);
      expect(groups.map((g) => g.length)).toEqual(ruleIds.map((id) => report.findings.filter((f) => f.ruleId === id).length));
      expect(groups.every((g) => new Set(g).size === 1)).toBe(true);
      await page.click(`#findings li.finding[data-rule="${target!.ruleId}"][data-row="${row}"]`);
      await page.waitForFunction((r) => document.querySelector('#detail')?.getAttribute('data-row') === String(r), row, { timeout: 10_000 });
      expect(await page.textContent('#detail [data-testid=findings]')).toContain(target!.ruleId);
      const marked = await page.$$eval('#detail .finding[data-pointer]', (els) =>
        els.map((e) => [e.closest('[data-testid]')?.getAttribute('data-testid'), e.getAttribute('data-pointer'), e.textContent]),
      );
      expect(marked).toContainEqual(['response', '/result/isError', '"true"']);
      // Found live as well: among the exchange's anomalies, as kind check.
      expect(await page.textContent('#detail [data-testid=anomalies]')).toContain(`check: ${target!.ruleId}`);
      // A pointer to a member that is absent marks its parent: the tool lacking its inputSchema.
      const absent = report.findings.find((f) => f.pointer === '/result/tools/0/inputSchema')!;
      await page.click(`#findings li.finding[data-row="${absent.where.row}"]`);
      await page.waitForFunction((r) => document.querySelector('#detail')?.getAttribute('data-row') === String(r), absent.where.row, { timeout: 10_000 });
      expect(await page.$$eval('#detail [data-testid=response] .finding', (els) => els.map((e) => e.getAttribute('data-pointer')))).toEqual([
        '/result/tools/0',
      ]);
      expect(await page.$$('#detail [data-testid=request] .finding')).toHaveLength(0);
      expect(errors).toEqual([]);
    } finally {
      await ui.stop();
    }
  }, 90_000);

  it('a result of several recordings: each recording shows its own findings, matched by number', async () => {
    // Two runs into one file: a broken build (recording 1), then a clean one (recording 2).
    const { inputSchema: _dropped, ...toolWithoutSchema } = SEARCH_TOOL;
    await recordSearch(dir, 'two', toolWithoutSchema, SEARCH_OK);
    const two = await recordSearch(dir, 'two', SEARCH_TOOL, SEARCH_OK);
    const out = join(dir, 'two.json');
    expect(mcptap('check', two, '--json', out).code).toBe(1);
    const ui = await startUi([two], ['--check', out]);
    try {
      const { page, errors } = await open(browser, ui);
      // The latest recording first: clean.
      await page.waitForSelector('#findings[data-recording$="#2"] [data-testid=no-findings]', { timeout: 10_000 });
      await page.click('#recording-list tr[data-recording$="#1"]');
      await page.waitForSelector('#findings[data-recording$="#1"] li.finding', { timeout: 10_000 });
      expect(await page.textContent('#findings')).toContain('/result/tools/0/inputSchema');
      expect(errors).toEqual([]);
    } finally {
      await ui.stop();
    }
  }, 90_000);

  it('a clean recording: "no findings" in the panel and no marks in any exchange', async () => {
    expect(checkJson(clean, join(dir, 'clean.json')).findings).toEqual([]);
    const ui = await startUi([clean], ['--check', join(dir, 'clean.json')]);
    try {
      const { page, errors } = await open(browser, ui);
      expect(await page.textContent('#findings [data-testid=no-findings]')).toBe('no findings');
      await page.waitForSelector('#table .row', { timeout: 15_000 });
      const rows = await page.$$eval('#table .row', (els) => els.map((e) => e.getAttribute('data-row')));
      for (const r of rows) {
        await page.click(`#table .row[data-row="${r}"]`);
        await page.waitForFunction((x) => document.querySelector('#detail')?.getAttribute('data-row') === x, r, { timeout: 10_000 });
        expect(await page.$$('#detail .json .finding')).toHaveLength(0);
        expect(await page.textContent('#detail [data-testid=findings]')).toContain('no findings');
      }
      expect(errors).toEqual([]);
    } finally {
      await ui.stop();
    }
  }, 90_000);
});
