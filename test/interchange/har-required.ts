/**
 * The required fields of HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), checked by
 * hand: the npm HAR schema packages are unmaintained or pull in a JSON-schema validator.
 * Returns what is missing or of the wrong type, as `path: problem`.
 */
type Kind = 'string' | 'number' | 'object' | 'array';
type Shape = { [field: string]: Kind | Shape | [Shape] };

const NAME_VALUE: Shape = { name: 'string', value: 'string' };
const REQUEST: Shape = {
  method: 'string',
  url: 'string',
  httpVersion: 'string',
  cookies: 'array',
  headers: [NAME_VALUE],
  queryString: [NAME_VALUE],
  headersSize: 'number',
  bodySize: 'number',
};
const RESPONSE: Shape = {
  status: 'number',
  statusText: 'string',
  httpVersion: 'string',
  cookies: 'array',
  headers: [NAME_VALUE],
  content: { size: 'number', mimeType: 'string' },
  redirectURL: 'string',
  headersSize: 'number',
  bodySize: 'number',
};
const ENTRY: Shape = {
  startedDateTime: 'string',
  time: 'number',
  request: REQUEST,
  response: RESPONSE,
  cache: 'object',
  timings: { send: 'number', wait: 'number', receive: 'number' },
};
const HAR: Shape = { log: { version: 'string', creator: { name: 'string', version: 'string' }, entries: [ENTRY] } };

export function harProblems(doc: unknown): string[] {
  const problems: string[] = [];
  check(doc, HAR, '', problems);
  const log = (doc as { log?: { version?: string; entries?: { startedDateTime?: string; request?: { postData?: unknown } }[] } }).log;
  if (log?.version !== '1.2') problems.push(`log.version: expected "1.2", got ${JSON.stringify(log?.version)}`);
  log?.entries?.forEach((e, i) => {
    if (typeof e.startedDateTime === 'string' && Number.isNaN(Date.parse(e.startedDateTime))) problems.push(`log.entries[${i}].startedDateTime: not ISO 8601`);
    const post = e.request?.postData as { mimeType?: unknown } | undefined;
    if (post !== undefined && typeof post.mimeType !== 'string') problems.push(`log.entries[${i}].request.postData.mimeType: missing`);
  });
  return problems;
}

function check(value: unknown, shape: Shape, path: string, problems: string[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${path || '(root)'}: expected an object`);
    return;
  }
  for (const [field, kind] of Object.entries(shape)) {
    const v = (value as Record<string, unknown>)[field];
    const at = path ? `${path}.${field}` : field;
    if (v === undefined) problems.push(`${at}: missing`);
    else if (Array.isArray(kind)) {
      if (!Array.isArray(v)) problems.push(`${at}: expected an array`);
      else v.forEach((item, i) => check(item, kind[0], `${at}[${i}]`, problems));
    } else if (typeof kind === 'object') check(v, kind, at, problems);
    else if (kind === 'array' ? !Array.isArray(v) : kind === 'object' ? typeof v !== 'object' || v === null : typeof v !== kind)
      problems.push(`${at}: expected ${kind}`);
  }
}
