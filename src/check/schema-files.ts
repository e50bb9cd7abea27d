/**
 * Where the vendored MCP JSON schemas are (schemas/mcp/<version>/schema.json, see schemas/mcp/README.md):
 * found relative to this module, so it works from src/ (tests), dist/src/ (a build) and an installed package.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McptapError } from '../errors.js';

/** The protocol versions whose schemas are vendored, oldest first. */
export const SCHEMA_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
export type SchemaVersion = (typeof SCHEMA_VERSIONS)[number];

export function isSchemaVersion(v: unknown): v is SchemaVersion {
  return typeof v === 'string' && (SCHEMA_VERSIONS as readonly string[]).includes(v);
}

let dir: string | undefined;

/** The `schemas/mcp` folder: the first ancestor of this module that has one. */
export function schemasDir(): string {
  if (dir) return dir;
  let at = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(at, 'schemas', 'mcp');
    if (existsSync(join(candidate, SCHEMA_VERSIONS[0], 'schema.json'))) return (dir = candidate);
    const up = dirname(at);
    if (up === at) throw new McptapError('MCPTAP_CHECK_SCHEMAS_MISSING', 'the vendored MCP schemas (schemas/mcp/) are missing from this installation');
    at = up;
  }
}

/** The parsed schema document of one version. */
export function readSchema(version: SchemaVersion): Record<string, unknown> {
  return JSON.parse(readFileSync(join(schemasDir(), version, 'schema.json'), 'utf8')) as Record<string, unknown>;
}
