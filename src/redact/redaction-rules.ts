/**
 * The user's redaction rules file (`--redact FILE`, `mcptap redact --rules FILE`; docs/redaction.md):
 * YAML or JSON, read into plain {@link RedactionRules} that the Redactor applies beside its
 * built-in ones. Every problem is reported as `file:line: field: message` (exit 4).
 *
 *   version: 1
 *   paths: [/params/arguments/note, /result/content/*\/text]   # JSON Pointers into each message
 *   fields: [session_key]                                     # JSON keys, anywhere
 *   headers: [x-tenant-token]                                 # HTTP headers
 *   patterns: ['sk-[A-Za-z0-9]{12,}']                         # regexps over strings and log lines
 */
import { McptapError } from '../errors.js';
import { issueLines, Reader, type Path } from '../data-file/validation.js';
import { parseYamlSource, readTextFile } from '../data-file/yaml-source.js';
import { parsePointer } from '../data-file/json-pointer.js';
import { linearRegExp } from './linear-regexp.js';
import type { RedactionRules } from './redactor.js';

const FIELDS = ['version', 'paths', 'fields', 'headers', 'patterns'] as const;
const LISTS = ['paths', 'fields', 'headers', 'patterns'] as const;
/** A header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Reads a rules file; MCPTAP_REDACT_RULES_MISSING when it cannot be read, MCPTAP_REDACT_RULES_INVALID when it is wrong. */
export function loadRedactionRules(file: string): RedactionRules {
  const text = readTextFile(file, (why) => new McptapError('MCPTAP_REDACT_RULES_MISSING', `cannot read the redaction rules ${file}: ${why}`));
  return parseRedactionRules(text, file);
}

export function parseRedactionRules(text: string, source: string): RedactionRules {
  const invalid = (detail: string) =>
    new McptapError('MCPTAP_REDACT_RULES_INVALID', `${source} is not a valid redaction rules file (see docs/redaction.md):\n${detail}`);
  const { value, locate } = parseYamlSource(text, (line, what) => invalid(`  ${source}:${line}: not valid YAML or JSON: ${what}`));
  const r = new Reader();
  const rules = readRules(value, r);
  if (r.issues.length > 0) throw invalid(issueLines(source, r.issues, locate));
  return rules;
}

function readRules(doc: unknown, r: Reader): RedactionRules {
  if (doc === null || doc === undefined) return {};
  const top = r.obj(doc, [], FIELDS);
  if (!top) return {};
  if (top.version !== undefined && top.version !== 1) r.fail(['version'], `must be 1 (got ${JSON.stringify(top.version)})`);
  const out: RedactionRules = {};
  for (const list of LISTS) {
    const v = top[list];
    if (v === undefined) continue;
    if (!Array.isArray(v)) {
      r.fail([list], 'must be a list');
      continue;
    }
    out[list] = v.flatMap((item: unknown, i) => {
      const ok = checkItem(list, item, [list, i], r);
      return ok === undefined ? [] : [ok];
    });
  }
  return out;
}

function checkItem(list: (typeof LISTS)[number], item: unknown, path: Path, r: Reader): string | undefined {
  if (typeof item !== 'string' || item === '') return r.fail(path, 'must be a non-empty string');
  try {
    if (list === 'paths') {
      if (parsePointer(item).length < 2) return r.fail(path, 'must point inside a message, e.g. /params/arguments/note');
    } else if (list === 'patterns') {
      if (linearRegExp(item).test('')) return r.fail(path, 'matches the empty string: it would redact nothing');
    } else if (list === 'headers' && !HEADER_NAME.test(item)) return r.fail(path, `"${item}" is not a header name`);
  } catch (err) {
    return r.fail(path, (err as Error).message);
  }
  return item;
}
