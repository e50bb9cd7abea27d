/**
 * Data files for argument templates: CSV (RFC 4180: header row, quoted fields, `""` escapes,
 * CRLF) or JSONL (one JSON object per line). Loaded once before the run; an iteration's row is
 * chosen by its index (sequential) or its deterministic random stream (random), so shards agree.
 */
import { readFile } from 'node:fs/promises';
import { McptapError } from '../../errors.js';
import { iterationRandom, SALT } from './random.js';
import type { DataSpec } from './scenario.js';

export type Row = Record<string, unknown>;

export class DataTables {
  private constructor(
    private readonly tables: { spec: DataSpec; rows: Row[] }[],
    private readonly seed: number,
  ) {}

  static empty(): DataTables {
    return new DataTables([], 0);
  }

  static async load(specs: readonly DataSpec[], seed: number): Promise<DataTables> {
    const tables = [];
    for (const spec of specs) tables.push({ spec, rows: await loadRows(spec) });
    return new DataTables(tables, seed);
  }

  rowsFor(phaseIndex: number, index: number): Record<string, Row> {
    const out: Record<string, Row> = {};
    for (const [i, { spec, rows }] of this.tables.entries()) {
      const n = rows.length;
      const k = spec.order === 'random' ? Math.floor(iterationRandom(this.seed, phaseIndex, index, SALT.data + i)() * n) : index % n;
      out[spec.name] = rows[k]!;
    }
    return out;
  }
}

async function loadRows(spec: DataSpec): Promise<Row[]> {
  let text: string;
  try {
    text = await readFile(spec.file, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (err as Error).message;
    throw new McptapError('MCPTAP_LOAD_DATA_MISSING', `data set "${spec.name}": the file ${spec.file} ${why}.`);
  }
  const rows = spec.format === 'csv' ? parseCsv(text, spec) : parseJsonl(text, spec);
  if (rows.length === 0) throw new McptapError('MCPTAP_LOAD_DATA_EMPTY', `data set "${spec.name}": ${spec.file} has no rows.`);
  return rows;
}

function parseJsonl(text: string, spec: DataSpec): Row[] {
  const rows: Row[] = [];
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new McptapError('MCPTAP_LOAD_DATA_INVALID', `${spec.file}:${i + 1}: not JSON (${(err as Error).message}).`);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new McptapError('MCPTAP_LOAD_DATA_INVALID', `${spec.file}:${i + 1}: each line must be a JSON object.`);
    }
    rows.push(v as Row);
  }
  return rows;
}

/** RFC 4180 CSV; the first record names the columns. */
export function parseCsv(text: string, spec: Pick<DataSpec, 'file'> = { file: 'csv' }): Row[] {
  const records = csvRecords(text);
  const header = records.shift();
  if (!header) return [];
  return records
    .filter((r) => !(r.length === 1 && r[0] === ''))
    .map((r, i) => {
      if (r.length !== header.length) {
        throw new McptapError('MCPTAP_LOAD_DATA_INVALID', `${spec.file}: record ${i + 2} has ${r.length} fields, the header has ${header.length}.`);
      }
      return Object.fromEntries(header.map((h, j) => [h, r[j]]));
    });
}

function csvRecords(text: string): string[][] {
  const out: string[][] = [];
  let rec: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') (rec.push(field), (field = ''));
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      rec.push(field);
      out.push(rec);
      rec = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || rec.length > 0) out.push([...rec, field]);
  return out;
}
