/**
 * Reads the charting library the HTML reports inline: uPlot's minified browser build and its
 * stylesheet, from the installed `uplot` package (a dependency), so a report needs no network.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ChartLibrary } from './html-page.js';

let cached: ChartLibrary | undefined;

export function loadChartLibrary(): ChartLibrary {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const read = (file: string) => readFileSync(require.resolve(`uplot/${file}`), 'utf8');
  const { version } = JSON.parse(read('package.json')) as { version: string };
  cached = { js: read('dist/uPlot.iife.min.js'), css: read('dist/uPlot.min.css'), name: `uPlot ${version}` };
  return cached;
}
