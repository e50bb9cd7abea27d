/**
 * Data files (YAML, or JSON, which YAML reads too) with located messages: the text read, parsed,
 * and a locator from a field's path to its line, so that every problem can be reported as
 * `file:line: field: message`. Shared by the scenario, match-rules and redaction-rules loaders.
 */
import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { McptapError } from '../errors.js';
import type { Locator, Path } from './validation.js';

/** The file's text; `failure(why)` is thrown when it cannot be read ("no such file" for a missing one). */
export function readTextFile(file: string, failure: (why: string) => McptapError): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw failure((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message);
  }
}

export interface YamlSource {
  value: unknown;
  locate: Locator;
}

/** Parses YAML (or JSON) text; a syntax error is thrown as `invalid(line, first line of the parser's message)`. */
export function parseYamlSource(text: string, invalid: (line: number, message: string) => McptapError): YamlSource {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const line = e.linePos?.[0]?.line ?? lc.linePos(e.pos[0]).line;
    throw invalid(line, e.message.split('\n')[0]!);
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // Resolving aliases can fail after a clean parse (an alias before its anchor, too many aliases).
    throw invalid(firstAliasLine(doc, lc), (err as Error).message.split('\n')[0]!);
  }
  return { value, locate: yamlLocator(doc, lc) };
}

/** The line of the document's first alias (what toJS can fail on), else 1. */
function firstAliasLine(doc: Document, lc: LineCounter): number {
  let line = 1;
  visit(doc, {
    Alias(_key, node) {
      const start = rangeStart(node);
      if (start !== undefined) line = lc.linePos(start).line;
      return visit.BREAK;
    },
  });
  return line;
}

/** The line of a path's value (or of its key) in the document; the deepest existing node otherwise. */
export function yamlLocator(doc: Document, lc: LineCounter): Locator {
  return (p: Path, atKey: boolean) => {
    let node: unknown = doc.contents;
    let offset: number | undefined = rangeStart(node);
    for (const [i, seg] of p.entries()) {
      const last = i === p.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
        if (!pair) break;
        offset = rangeStart(atKey && last ? pair.key : (pair.value ?? pair.key)) ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
        node = node.items[seg];
        offset = rangeStart(node) ?? offset;
      } else break;
    }
    return offset === undefined ? undefined : lc.linePos(offset).line;
  };
}

function rangeStart(n: unknown): number | undefined {
  const r = (n as { range?: [number, number, number] } | null)?.range;
  return r ? r[0] : undefined;
}
