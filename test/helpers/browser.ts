/**
 * Opens an HTML report in the real headless Chromium (Debian `chromium`; .ci/run installs it),
 * driven over the DevTools protocol by playwright-core, and reports what a person would see: the
 * headings, how many distinct colours each chart's screenshot holds (a blank or failed chart has
 * one or two), every request the page made, and any script error. Every wait is bounded.
 */
import { PNG } from 'pngjs';
import { chromium, type Browser } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import { findExecutable } from './prometheus.js';

export const CHROMIUM = findExecutable('chromium') ?? findExecutable('chromium-browser');

let shared: Promise<Browser> | undefined;

/**
 * The test process's one headless Chromium, launched on first use and shared by the files the
 * process runs (a launch costs about 4 s of CPU). Each user works in browser contexts of its own and
 * closes them ({@link closeContexts}), never the browser; Playwright ends it when the process exits.
 */
export async function sharedChromium(): Promise<Browser> {
  const browser = await (shared ??= chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'], timeout: 60_000 }).catch((err: unknown) => {
    shared = undefined;
    throw err;
  }));
  if (browser.isConnected()) return browser;
  shared = undefined;
  return sharedChromium();
}

/** Closes every context (and so every page) opened in `browser`: what one test file leaves. */
export const closeContexts = (browser: Browser): Promise<unknown> => Promise.all(browser.contexts().map((c) => c.close()));

export interface OpenedReport {
  /** Every URL the page requested (the report itself first). */
  requests: string[];
  /** Script errors and console errors. */
  errors: string[];
  headings: string[];
  /** `data-chart` id → distinct colours in that chart's screenshot. */
  chartColours: Record<string, number>;
  /** Distinct colours of the whole page's screenshot. */
  pageColours: number;
  chartsDrawn: number;
  /** Whatever the given expression evaluates to in the page. */
  probe: unknown;
  text: string;
  /** Every text drawn on each chart's canvas (`data-chart` id), where it landed. */
  chartTexts: Record<string, DrawnText[]>;
}

/** A text drawn on a canvas: its horizontal extent and baseline y in canvas pixels. */
export interface DrawnText {
  text: string;
  x0: number;
  x1: number;
  y: number;
  baseline: string;
  /** Drawn at an angle (rotated axis labels); `vertical`: at 90 degrees (a y-axis title). */
  rotated: boolean;
  vertical: boolean;
  canvasWidth: number;
}

/** Wraps fillText before the page's scripts run, recording where each text lands (rotation included). */
const RECORD_TEXT = `(() => {
  const texts = (window.__chartTexts = []);
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (t, x, y) {
    const m = this.getTransform();
    const w = this.measureText(String(t)).width;
    const a = this.textAlign;
    const p0 = x + (a === 'right' || a === 'end' ? -w : a === 'center' ? -w / 2 : 0);
    const xs = [m.a * p0 + m.c * y + m.e, m.a * (p0 + w) + m.c * y + m.e];
    const chart = this.canvas.closest('[data-chart]');
    texts.push({ chart: chart ? chart.getAttribute('data-chart') : '', text: String(t), x0: Math.min(...xs), x1: Math.max(...xs),
      y: m.b * p0 + m.d * y + m.f, baseline: this.textBaseline, rotated: Math.abs(m.b) > 1e-6, vertical: Math.abs(m.a) < 1e-6, canvasWidth: this.canvas.width });
    return fill.apply(this, arguments);
  };
})()`;

export function distinctColours(png: Buffer): number {
  const img = PNG.sync.read(png);
  const seen = new Set<number>();
  for (let i = 0; i < img.data.length; i += 4) seen.add(img.data.readUInt32BE(i));
  return seen.size;
}

export async function openReport(file: string, screenshot?: string, probe = 'undefined'): Promise<OpenedReport> {
  const context = await (await sharedChromium()).newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    await page.addInitScript(RECORD_TEXT);
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => (m.type() === 'error' ? errors.push(`console: ${m.text()}`) : undefined));
    await page.goto(pathToFileURL(file).href, { timeout: 30_000 });
    await page.waitForSelector('body[data-charts-drawn]', { timeout: 30_000 });
    const chartColours: Record<string, number> = {};
    for (const el of await page.$$('[data-chart]')) {
      const id = (await el.getAttribute('data-chart'))!;
      chartColours[id] = distinctColours(await el.screenshot({ timeout: 30_000 }));
    }
    const full = await page.screenshot({ fullPage: true, timeout: 30_000, ...(screenshot ? { path: screenshot } : {}) });
    return {
      requests,
      errors,
      headings: await page.$$eval('h1, h2, h3', (hs) => hs.map((h) => h.textContent ?? '')),
      chartColours,
      pageColours: distinctColours(full),
      chartsDrawn: Number(await page.getAttribute('body', 'data-charts-drawn')),
      probe: await page.evaluate(probe),
      text: await page.innerText('body'),
      chartTexts: groupTexts(await page.evaluate('window.__chartTexts')),
    };
  } finally {
    await context.close();
  }
}

function groupTexts(list: unknown): Record<string, DrawnText[]> {
  const out: Record<string, DrawnText[]> = {};
  for (const { chart, ...t } of list as (DrawnText & { chart: string })[]) (out[chart] ??= []).push(t);
  return out;
}

/** The x-axis tick labels of a chart's texts: rotated ones, or level ones hung from the axis (not its title, the lowest). */
export function xTickLabels(texts: readonly DrawnText[]): DrawnText[] {
  const level = texts.filter((t) => !t.rotated && t.baseline === 'top');
  const titleY = Math.max(...level.map((t) => t.y));
  return texts.filter((t) => (t.rotated && !t.vertical) || (!t.rotated && t.baseline === 'top' && t.y < titleY));
}
