/**
 * The catalogue of the tool-contract rules (`contract/...`): ids, default severities and help, the
 * source of their docs/check.md sections and SARIF rule descriptors.
 */
import type { RuleInfo } from '../finding.js';

export const CONTRACT = {
  unknownTool: 'contract/unknown-tool',
  undeclaredTool: 'contract/undeclared-tool',
  argumentsInvalid: 'contract/arguments-invalid',
  argumentsAccepted: 'contract/arguments-accepted',
  argumentsExtraAccepted: 'contract/arguments-extra-accepted',
  outputInvalid: 'contract/output-invalid',
  outputMissing: 'contract/output-missing',
  outputNoText: 'contract/output-no-text',
  promptArgumentMissing: 'contract/prompt-argument-missing',
  resourceUnlisted: 'contract/resource-unlisted',
  schemaUnusable: 'contract/schema-unusable',
  checkFailed: 'contract/check-failed',
} as const;

export const TOOL_CONTRACT_RULES: RuleInfo[] = [
  {
    id: CONTRACT.unknownTool,
    family: 'contract',
    severity: 'warning',
    title: 'tools/call names a tool the server declared',
    help: 'The client called a tool that is not in the latest complete tools/list of its connection or session, and the server rejected the call or never answered. Call only listed tools; list again after notifications/tools/list_changed.',
  },
  {
    id: CONTRACT.undeclaredTool,
    family: 'contract',
    severity: 'error',
    title: 'A server runs only the tools it declared',
    help: 'The server answered a tools/call successfully for a tool missing from its latest complete tools/list, with no list_changed notification in between. Declare every tool the server serves, or send notifications/tools/list_changed when the set changes.',
  },
  {
    id: CONTRACT.argumentsInvalid,
    family: 'contract',
    severity: 'warning',
    title: 'tools/call arguments satisfy the declared inputSchema',
    help: "The client sent arguments that break the tool's inputSchema; the server rejected the call (isError or a JSON-RPC error) or did not answer. Fix the client (or the model prompt) to build arguments from the schema.",
  },
  {
    id: CONTRACT.argumentsAccepted,
    family: 'contract',
    severity: 'error',
    title: 'A server does not accept arguments its inputSchema forbids',
    help: 'The server answered successfully to arguments that break its own inputSchema: it does not validate its inputs (the spec says servers MUST), or the schema does not describe what the tool takes. Validate arguments against the schema, or correct the schema.',
  },
  {
    id: CONTRACT.argumentsExtraAccepted,
    family: 'contract',
    severity: 'warning',
    title: 'A server says when it ignores arguments its inputSchema does not declare',
    help: 'The server answered successfully to a call with members its inputSchema forbids (additionalProperties false) and ignored them, as zod-based SDK servers do by default. The spec asks servers to validate inputs, not to reject unknown keys; but the client believes the extra arguments did something. Drop the keys in the client, or reject them in the server (a strict schema).',
  },
  {
    id: CONTRACT.outputInvalid,
    family: 'contract',
    severity: 'error',
    title: 'structuredContent conforms to the declared outputSchema',
    help: "A successful tool result's structuredContent breaks the tool's outputSchema; SDK clients reject such results. Fix the tool's output or its outputSchema.",
  },
  {
    id: CONTRACT.outputMissing,
    family: 'contract',
    severity: 'error',
    title: 'A tool with an outputSchema returns structuredContent',
    help: 'The tool declares an outputSchema, so its successful results MUST carry structuredContent; this one has none. Return structuredContent, or drop the outputSchema. Results with isError are exempt.',
  },
  {
    id: CONTRACT.outputNoText,
    family: 'contract',
    severity: 'warning',
    title: 'Structured results are also serialized in a text block',
    help: 'The result carries structuredContent but no text content block with the same value as JSON; the spec says a tool returning structured content SHOULD, for clients that read only content. Add a text block with JSON.stringify(structuredContent). Option match: any accepts any text block.',
    options: ['match'],
  },
  {
    id: CONTRACT.promptArgumentMissing,
    family: 'contract',
    severity: 'warning',
    title: 'prompts/get gives every argument the prompt declares required',
    help: 'The client fetched a prompt without an argument that prompts/list declares required. Pass every required argument.',
  },
  {
    id: CONTRACT.resourceUnlisted,
    family: 'contract',
    severity: 'warning',
    title: 'resources/read reads a URI the server offered',
    help: 'The client read a URI that matches no resource of a complete resources/list, no template of resources/templates/list and no resource link the server returned. Warning when the server rejected the read or never answered; a note when it served it (servers may serve resources they do not list).',
  },
  {
    id: CONTRACT.schemaUnusable,
    family: 'contract',
    severity: 'error',
    title: "A tool's inputSchema and outputSchema compile as JSON Schema",
    help: 'A declared schema cannot be compiled (by Ajv, draft-07 or 2020-12, formats on): not an object, an unknown type, an unresolvable $ref. Clients cannot validate against it, and SDK clients that compile schemas fail on it. Fix the schema.',
  },
  {
    id: CONTRACT.checkFailed,
    family: 'contract',
    severity: 'note',
    title: 'The tool-contract checker read every event',
    help: 'The checker failed on an event and skipped it (a bug in mcptap: please report it with the recording). Other events were still checked.',
  },
];
