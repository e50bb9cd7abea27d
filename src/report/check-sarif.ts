/**
 * `mcptap check --sarif`: SARIF 2.1.0 for GitHub code scanning. Rules come from the catalogue (help
 * text, a helpUri to docs/check.md); each result is located at the recording file (the line is the
 * exchange's row, else the frame's sequence number, else 1) and, logically, at its exchange and its tool.
 */
import type { Finding } from '../check/finding.js';
import { VERSION } from '../version.js';
import { detailText, ruleHelpUri, type CheckReportInput } from './check-view.js';

/**
 * One SARIF log; a run per recording checked. Several runs each get a category of their own
 * (automationDetails.id): GitHub code scanning refuses runs of one tool sharing a category.
 */
export function checkSarif(inputs: readonly CheckReportInput[]): unknown {
  const runs = inputs.map((input) => ({
    ...(inputs.length > 1 && { automationDetails: { id: `mcptap-check/recording-${input.recordingId}/` } }),
    ...sarifRun(input),
  }));
  return { $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0', runs };
}

function sarifRun(input: CheckReportInput): Record<string, unknown> {
  const { result } = input;
  const index = new Map(result.rules.map((r, i) => [r.id, i]));
  const notifications =
    result.omitted > 0 ? [{ level: 'warning', message: { text: `${result.omitted} more findings over the cap were counted but not listed` } }] : [];
  return {
    tool: {
      driver: {
        name: 'mcptap',
        version: VERSION,
        informationUri: ruleHelpUri({ id: '' }).replace(/#$/, ''),
        rules: result.rules.map((r) => ({
          id: r.id,
          name: r.id.replace(/[^A-Za-z0-9]+(.)/g, (_m, c: string) => c.toUpperCase()),
          shortDescription: { text: r.title },
          fullDescription: { text: r.help },
          help: { text: `${r.help}\n\nSee ${ruleHelpUri(r)}`, markdown: `${r.help}\n\n[docs/check.md](${ruleHelpUri(r)})` },
          helpUri: ruleHelpUri(r),
          defaultConfiguration: { level: r.severity, enabled: r.enabled },
          properties: { tags: ['mcp', r.family], ...(result.unjudged[r.id] !== undefined && { notJudged: result.unjudged[r.id] }) },
        })),
      },
    },
    invocations: [{ executionSuccessful: result.checkerErrors === 0, toolExecutionNotifications: notifications }],
    results: result.findings
      .filter((f) => result.unjudged[f.ruleId] === undefined)
      .map((f) => ({
        ruleId: f.ruleId,
        ...(index.has(f.ruleId) && { ruleIndex: index.get(f.ruleId) }),
        level: f.severity,
        message: { text: [f.message, detailText(f)].filter(Boolean).join(' - ') },
        locations: [location(input, f)],
        properties: props(input, f),
      })),
  };
}

function location(input: CheckReportInput, f: Finding): unknown {
  const w = f.where;
  const logical: unknown[] = [];
  if (w.exchangeKey !== undefined)
    logical.push({ name: w.method ?? w.exchangeKey, fullyQualifiedName: `recording ${input.recordingId}/${w.exchangeKey}`, kind: 'member' });
  if (w.subject !== undefined) logical.push({ name: w.subject.name, fullyQualifiedName: `${w.subject.kind}/${w.subject.name}`, kind: 'type' });
  else if (w.tool !== undefined) logical.push({ name: w.tool, fullyQualifiedName: `tool/${w.tool}`, kind: 'type' });
  return {
    physicalLocation: {
      artifactLocation: { uri: input.file.split('\\').join('/') },
      region: { startLine: startLine(f) },
    },
    ...(logical.length > 0 && { logicalLocations: logical }),
  };
}

function props(input: CheckReportInput, f: Finding): Record<string, unknown> {
  const out: Record<string, unknown> = { recording: input.recordingId };
  for (const k of ['pointer', 'expected', 'found', 'specVersion', 'schemaRule'] as const) if (f[k] !== undefined) out[k] = f[k];
  if (f.where.jsonRpcId !== undefined) out.jsonRpcId = f.where.jsonRpcId;
  if (f.where.side !== undefined) out.side = f.where.side;
  return out;
}

/** The exchange's row (as `mcptap show` numbers them), else the frame's sequence number; SARIF lines start at 1. */
function startLine(f: Finding): number {
  const n = f.where.row ?? f.where.frameSeq;
  return n !== undefined && n >= 1 ? n : 1;
}
