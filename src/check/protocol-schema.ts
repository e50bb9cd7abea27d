/**
 * The official MCP JSON Schema of each protocol version as validators: Ajv (draft-07 for the three
 * older versions, its 2020-12 build for 2025-11-25 on), each version compiled once, lazily, and each
 * definition on first use. A message is validated against its most specific definition: a request or
 * notification by its `method`, a result by its request's method (tools/call -> CallToolResult),
 * an error against the JSON-RPC error response.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { readableIssues, schemaPointers, type SchemaIssue } from './ajv-issues.js';
import { readSchema, type SchemaVersion } from './schema-files.js';
import { McptapError } from '../errors.js';

export type { SchemaIssue };

/** What a message is, for picking its definition. */
export type MessageRole = 'request' | 'notification' | 'result' | 'error';

export interface MessageVerdict {
  /** The definition the message was checked against (`CallToolResult`); undefined when none applies. */
  definition?: string;
  issues: SchemaIssue[];
}

const DIALECT_2020: ReadonlySet<SchemaVersion> = new Set(['2025-11-25', '2026-07-28']);
// CJS default exports seen from ESM (ajv ships CommonJS).
const AjvDraft7 = Ajv as unknown as typeof Ajv.default;
const AjvModern = Ajv2020 as unknown as typeof Ajv2020.default;
const withFormats = addFormats as unknown as typeof addFormats.default;

/** One version's schema, compiled. */
export class VersionSchema {
  private readonly ajv: InstanceType<typeof AjvDraft7>;
  private readonly defs: Record<string, unknown>;
  private readonly defsKey: string;
  private readonly pointers: WeakMap<object, string>;
  private readonly byMethod = new Map<string, string>();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly version: SchemaVersion) {
    const doc = readSchema(version);
    this.defsKey = '$defs' in doc ? '$defs' : 'definitions';
    this.defs = doc[this.defsKey] as Record<string, unknown>;
    this.pointers = schemaPointers(doc);
    const Build = DIALECT_2020.has(version) ? AjvModern : AjvDraft7;
    // strict off: the spec's schemas carry annotations Ajv does not know; verbose: errors name their schema object.
    this.ajv = new Build({ strict: false, allErrors: true, verbose: true });
    withFormats(this.ajv);
    this.ajv.addSchema(doc, 'mcp');
    for (const [name, def] of Object.entries(this.defs)) {
      const method = (def as { properties?: { method?: { const?: unknown } } }).properties?.method?.const;
      if (typeof method !== 'string' || !/(Request|Notification)$/.test(name)) continue;
      // A union's alias (2026-07-28's ClientNotification) loses to the concrete definition.
      if (!this.byMethod.has(method) || /^(Client|Server)/.test(this.byMethod.get(method)!)) this.byMethod.set(method, name);
    }
  }

  has(def: string): boolean {
    return Object.hasOwn(this.defs, def);
  }

  /** The definition of a request's or notification's method, if the schema knows the method. */
  methodDefinition(method: string): string | undefined {
    return this.byMethod.get(method);
  }

  /** The definition a message is checked against; undefined for a method the schema does not know. */
  definitionFor(role: MessageRole, method: string | undefined, message: Record<string, unknown>): string | undefined {
    if (role === 'error') return ['JSONRPCErrorResponse', 'JSONRPCError'].find((d) => this.has(d));
    const def = method === undefined ? undefined : this.byMethod.get(method);
    if (role !== 'result') return def;
    const result = message.result as Record<string, unknown> | undefined;
    if (result?.resultType === 'input_required' && this.has('InputRequiredResult')) return 'InputRequiredResult';
    if (result !== undefined && typeof result === 'object' && 'task' in result && this.has('CreateTaskResult')) return 'CreateTaskResult';
    const named = def?.replace(/Request$/, 'Result');
    if (named !== undefined && this.has(named)) return named;
    return this.has('EmptyResult') ? 'EmptyResult' : 'Result';
  }

  /** Validates `value` against a definition; issue pointers get `prefix` (the value's place in the message). */
  validate(def: string, value: unknown, prefix = ''): SchemaIssue[] {
    let fn = this.compiled.get(def);
    if (!fn) {
      fn = this.ajv.getSchema(`mcp#/${this.defsKey}/${def}`);
      if (!fn) throw new McptapError('MCPTAP_CHECK_SCHEMAS_MISSING', `no definition ${def} in the ${this.version} schema`);
      this.compiled.set(def, fn);
    }
    if (fn(value)) return [];
    return readableIssues(fn.errors ?? [], this.pointers, prefix);
  }

  /** A whole JSON-RPC message checked against its most specific definition. */
  validateMessage(role: MessageRole, method: string | undefined, message: Record<string, unknown>): MessageVerdict {
    const definition = this.definitionFor(role, method, message);
    if (definition === undefined) return { issues: [] };
    if (role === 'result') return { definition, issues: this.validate(definition, message.result, '/result') };
    return { definition, issues: this.validate(definition, message) };
  }
}

/** All versions, each compiled on first use. */
export class ProtocolSchemas {
  private readonly versions = new Map<SchemaVersion, VersionSchema>();

  get(version: SchemaVersion): VersionSchema {
    let v = this.versions.get(version);
    if (!v) this.versions.set(version, (v = new VersionSchema(version)));
    return v;
  }
}
