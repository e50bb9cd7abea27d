/**
 * Reads a JSON result written by `mcptap load --json`, checking that it is one (format and the
 * parts every reader needs); anything else is a one-line error under the caller's code.
 */
import { readFile } from 'node:fs/promises';
import { McptapError, type McptapErrorCode } from '../errors.js';
import type { LoadResult } from '../load/results/load-result.js';
import { isSqliteFile } from '../store/recording-file-precheck.js';

/** What every reader of a result (merge, compare) relies on. */
const RESULT_PARTS: ReadonlyArray<[keyof LoadResult, 'array' | 'object']> = [
  ['shards', 'array'],
  ['phases', 'array'],
  ['thresholdSpecs', 'array'],
  ['scheduleLag', 'object'],
  ['overall', 'object'],
  ['methods', 'object'],
  ['tools', 'object'],
  ['steps', 'object'],
];

export async function readLoadResult(file: string, code: McptapErrorCode): Promise<LoadResult> {
  if (isSqliteFile(file)) throw new McptapError(code, `${file} is a recording (SQLite), not a load result: give the JSON of mcptap load --json`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new McptapError(code, `cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    const v = JSON.parse(text) as LoadResult;
    if (v?.format !== 'mcptap-load-result/1')
      throw new Error(
        `not an mcptap load result (${v?.format === undefined ? 'no "format" field; mcptap load --json writes one' : `format: ${String(v.format)}`})`,
      );
    const missing = RESULT_PARTS.filter(([key, kind]) => (kind === 'array' ? !Array.isArray(v[key]) : typeof v[key] !== 'object' || v[key] === null));
    if (missing.length > 0) throw new Error(`an incomplete mcptap load result (no ${missing.map(([k]) => k).join(', ')})`);
    return v;
  } catch (err) {
    throw new McptapError(code, `${file}: ${(err as Error).message}`);
  }
}
