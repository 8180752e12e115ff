import { appendFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';

/**
 * Checks every HTTP answer the test suites receive through `Api` against the OpenAPI document the
 * service serves (success and error answers alike). Ajv runs in strict mode and the schemas keep
 * their `additionalProperties: false`, so an undocumented field, status or `details.reason` fails
 * the call that received it.
 *
 * `OPENAPI_CONFORMANCE_LOG=<file>` appends every checked exchange (and its verdict) to that file as
 * JSON lines instead of failing, to survey a whole run.
 */

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  literalSegments: number;
  responses: Map<string, { validate?: ValidateFunction; hasContent: boolean }>;
}

interface JsonSchemaRef {
  $ref?: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

let operations: Operation[] | undefined;
let envelope: ValidateFunction | undefined;

function compile(): Operation[] {
  const doc = buildOpenApiDocument('http://127.0.0.1') as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>>;
    components?: { schemas?: Record<string, object> };
  };
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  ajv.addKeyword('example');
  const rewrite = (schema: object): object =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/$defs/')) as object;
  ajv.addSchema({ $id: 'components', $defs: rewrite(doc.components?.schemas ?? {}) });
  envelope = ajv.compile({ $ref: 'components#/$defs/ErrorEnvelope' });
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const segments = template.split('/');
    const pattern = new RegExp('^' + segments.map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '$');
    for (const [method, op] of Object.entries(item)) {
      const responses = new Map<string, { validate?: ValidateFunction; hasContent: boolean }>();
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.['application/json']?.schema as JsonSchemaRef | undefined;
        responses.set(status, { validate: schema ? ajv.compile(rewrite(schema)) : undefined, hasContent: response.content !== undefined });
      }
      ops.push({ method: method.toUpperCase(), template, pattern, literalSegments: segments.filter((s) => !s.startsWith('{')).length, responses });
    }
  }
  return ops.sort((a, b) => b.literalSegments - a.literalSegments);
}

function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
}

/**
 * The problems of one answer against the document, empty when it conforms. Paths the document
 * does not describe (the `/trpc` endpoint, unknown routes) only need the error envelope on 4xx/5xx.
 * @param method HTTP method; `path` the request path (the query string is ignored).
 */
export function conformanceProblems(method: string, path: string, status: number, contentType: string | null, body: unknown): string[] {
  operations ??= compile();
  const pathname = path.split('?')[0]!;
  const op = operations.find((o) => o.method === method && o.pattern.test(pathname));
  const isJson = contentType?.startsWith('application/json') ?? false;
  if (!op) {
    if (status < 400 || pathname.startsWith('/trpc')) return [];
    if (!isJson) return [`${method} ${pathname} ${status}: error answer is not JSON`];
    return envelope!(body) ? [] : [`${method} ${pathname} ${status}: not the error envelope: ${describeErrors(envelope!)}`];
  }
  const response = op.responses.get(String(status));
  const where = `${method} ${op.template} ${status}`;
  if (!response) return [`${where}: status not documented (body ${JSON.stringify(body)})`];
  if (!response.validate) return [];
  if (!isJson) return [`${where}: documented as JSON, answered ${contentType ?? 'no content type'}`];
  return response.validate(body) ? [] : [`${where}: ${describeErrors(response.validate)} (body ${JSON.stringify(body)})`];
}

/**
 * Checks one answer: throws with every problem, or (with `OPENAPI_CONFORMANCE_LOG`) records it.
 * @throws Error naming the operation, status and schema violations.
 */
export function assertConformsToOpenApi(method: string, path: string, status: number, contentType: string | null, body: unknown): void {
  const problems = conformanceProblems(method, path, status, contentType, body);
  const log = process.env.OPENAPI_CONFORMANCE_LOG;
  if (log) {
    const reason = typeof body === 'object' && body !== null ? (body as { details?: { reason?: unknown } }).details?.reason : undefined;
    appendFileSync(log, JSON.stringify({ method, path: path.split('?')[0], status, reason, problems }) + '\n');
    return;
  }
  if (problems.length > 0) throw new Error(`The answer does not match the OpenAPI document: ${problems.join(' | ')}`);
}
