import type { OperationObject, PathItemObject, ReferenceObject, ResponseObject, SchemaObject } from 'openapi3-ts/oas31';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import type { ProcedureMeta } from '../lib/procedure-meta.js';
import { appRouter } from '../routers/index.js';
import { LOGO_CONTENT_TYPES } from '../entities/tenant-logo.js';
import { ERROR_ENVELOPE_SCHEMA, errorResponses } from './openapi-errors.js';

/** The tags of the document, each with what its operations do (every operation's tag is declared here). */
const TAGS = [
  { name: 'tenants', description: 'Creating a tenant (workspace) with its first admin' },
  { name: 'auth', description: 'Sign-up, sign-in (password, one-time codes), sessions and refresh-token rotation' },
  { name: 'account', description: 'Email verification and password reset' },
  { name: 'me', description: 'The signed-in user: profile, password, deletion' },
  { name: 'mfa', description: 'TOTP enrollment of the signed-in user (RFC 6238)' },
  { name: 'idp', description: 'Sign-in through the tenant’s external OpenID Connect provider' },
  { name: 'invites', description: 'Inviting users into a tenant and accepting invites' },
  { name: 'api-keys', description: 'Tenant API keys for machine clients' },
  { name: 'applications', description: 'The tenant\'s applications: clients of its OpenID Provider (docs/oidc.md)' },
  { name: 'openid provider', description: 'The hand-off between the tenant’s OpenID Provider and its hosted sign-in page (docs/oidc.md "Sign-in")' },
  { name: 'access control', description: 'Your API resources, their permissions, and roles held by users and m2m applications (docs/oidc.md "Roles and permissions")' },
  { name: 'organizations', description: 'The tenant’s own customers: organizations, their members and organization roles (docs/organizations.md)' },
  { name: 'enterprise sso', description: 'Single sign-on at customer companies’ SAML 2.0 identity providers, routed by email domain (docs/sso.md)' },
  { name: 'users', description: 'Administration of the tenant’s users' },
  { name: 'tenant', description: 'The tenant’s settings (MFA policy, email verification, IdP)' },
  { name: 'audit', description: 'The tenant’s audit trail' },
  { name: 'webhooks', description: 'Signed event delivery to the tenant’s HTTPS endpoints (Standard Webhooks)' },
  { name: 'data protection', description: 'Data export and erasure (GDPR articles 15, 17 and 20)' },
  { name: 'service', description: 'Liveness, readiness and this document' },
];

interface ProcedureLike {
  _def: { meta?: ProcedureMeta; inputs?: unknown[] };
}

/**
 * Rebuilds every operation's error responses from its procedure meta (see src/rest/openapi-errors.ts),
 * and marks public operations with an empty `security` requirement.
 */
function applyProcedureMeta(doc: OpenAPIObject): void {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, ProcedureLike> } })._def.procedures;
  for (const [procedurePath, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta;
    const openapi = meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const op = (doc.paths?.[openapi.path] as PathItemObject | undefined)?.[openapi.method.toLowerCase() as 'get'] as OperationObject | undefined;
    if (!op) throw new Error(`${procedurePath}: ${openapi.method} ${openapi.path} is missing from the generated document`);
    const protect = openapi.protect ?? true;
    const descriptions = Array.isArray(openapi.errorResponses) ? {} : (openapi.errorResponses ?? {});
    const success = op.responses?.['200'] as ResponseObject | undefined;
    if (success && success.description === 'Successful response') success.description = openapi.summary ?? 'OK';
    op.responses = {
      ...(success ? { '200': success } : {}),
      ...errorResponses({
        procedurePath,
        method: openapi.method,
        path: openapi.path,
        protect,
        hasInput: (procedure._def.inputs ?? []).length > 0,
        descriptions,
        reasons: meta.errorReasons ?? {},
        kindReasons: meta.kindErrorReasons ?? {},
        rateLimited: meta.rateLimit !== undefined,
      }),
    };
    if (!protect) op.security = [];
    applyBodyOverride(op, procedure);
    op.description ??= openapi.summary;
  }
}

/**
 * trpc-to-openapi builds a request body from the input object's fields and ignores a Zod
 * `.meta({ override })` on the object itself; the override (e.g. a `oneOf` of two body forms) is
 * applied here.
 */
function applyBodyOverride(op: OperationObject, procedure: ProcedureLike): void {
  const input = (procedure._def.inputs ?? []).at(-1) as { meta?: () => { override?: unknown } | undefined } | undefined;
  const override = typeof input?.meta === 'function' ? input.meta()?.override : undefined;
  const content = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.['application/json'];
  if (override && typeof override === 'object' && content) content.schema = override as SchemaObject;
}

const json = (schema: SchemaObject | ReferenceObject) => ({ 'application/json': { schema } });

/**
 * The provider callback answers a browser that holds the workspace's binding cookie (a sign-in the
 * hosted pages started) with 303 to the hosted page instead of the JSON session (docs/web.md); that
 * answer is served before the procedure, so it is added here.
 */
function documentCallbackHandOff(doc: OpenAPIObject): void {
  const operation = doc.paths?.['/v1/{tenantSlug}/oauth/idp/callback']?.get;
  if (!operation) return;
  operation.responses = {
    ...operation.responses,
    '303': {
      description:
        'Only for a browser holding the workspace\'s binding cookie (a sign-in started by the hosted pages): a redirect to ' +
        '`/app/{tenantSlug}/idp-callback`, with `code`, `state`, `error`, `error_description` and `iss` moved into the URL fragment; ' +
        'the page completes the sign-in. API clients never get it.',
      headers: { Location: { description: 'The hosted callback page', schema: { type: 'string' } } },
    },
  };
}

/**
 * GET audit/export streams its own answer (CSV or a JSON array) rather than a tRPC result; its 200
 * is described here.
 */
function documentAuditExport(doc: OpenAPIObject): void {
  const operation = doc.paths?.['/v1/{tenantSlug}/audit/export']?.get;
  const success = operation?.responses?.['200'] as ResponseObject | undefined;
  if (!success) return;
  const auditEvent = doc.components?.schemas?.AuditEvent as SchemaObject | undefined;
  if (!auditEvent || !doc.components?.schemas) return;
  doc.components.schemas.ExportedAuditEvent = {
    ...auditEvent,
    description: 'An audit event with the emails of its actor and target users (null when not a user, or erased)',
    properties: {
      ...auditEvent.properties,
      actorEmail: { type: ['string', 'null'] },
      targetEmail: { type: ['string', 'null'] },
    },
    required: [...(auditEvent.required ?? []), 'actorEmail', 'targetEmail'],
  };
  const exported: ReferenceObject = { $ref: '#/components/schemas/ExportedAuditEvent' };
  success.description = 'The matching events, newest first, as an attachment';
  success.headers = { 'Content-Disposition': { description: '`attachment; filename="audit-{tenantSlug}-{date}.{format}"`', schema: { type: 'string' } } };
  success.content = {
    'text/csv': { schema: { type: 'string', description: 'RFC 4180 CSV with a header line' } },
    'application/json': { schema: { type: 'array', items: exported } },
  };
}

/** GET users/export streams NDJSON rather than a tRPC result; its 200 is described here (docs/import.md). */
function documentUserExport(doc: OpenAPIObject): void {
  const operation = doc.paths?.['/v1/{tenantSlug}/users/export']?.get;
  const success = operation?.responses?.['200'] as ResponseObject | undefined;
  if (!success || !doc.components?.schemas) return;
  doc.components.schemas.ExportedUser = {
    type: 'object',
    description: 'One line of the users export: no password hash, no secret',
    properties: {
      id: { type: 'string', format: 'uuid' },
      email: { type: 'string', format: 'email' },
      emailVerified: { type: 'boolean' },
      role: { type: 'string', enum: ['Member', 'Admin'] },
      status: { type: 'string', enum: ['Pending', 'Active', 'Suspended'] },
      createdAt: { type: 'string', format: 'date-time' },
      lastLoginAt: { type: ['string', 'null'], format: 'date-time' },
      totpEnrolled: { type: 'boolean' },
      locale: { type: ['string', 'null'] },
      importedAt: { type: ['string', 'null'], format: 'date-time', description: 'When an import created the user; null otherwise' },
    },
    required: ['id', 'email', 'emailVerified', 'role', 'status', 'createdAt', 'lastLoginAt', 'totpEnrolled', 'locale', 'importedAt'],
  };
  success.description = 'Every live user, oldest first, one `ExportedUser` JSON object a line, as an attachment';
  success.headers = { 'Content-Disposition': { description: '`attachment; filename="users-{tenantSlug}-{date}.ndjson"`', schema: { type: 'string' } } };
  success.content = {
    // The schema of each line (OpenAPI 3.1 has no stream item keyword; 3.2's `itemSchema` says the same).
    'application/x-ndjson': { schema: { $ref: '#/components/schemas/ExportedUser' } },
  };
}

/**
 * POST users/import-jobs takes an NDJSON body (the procedure streams it; its tRPC input is empty) and
 * GET users/import-jobs/{id}/errors streams NDJSON; both are described here (docs/import.md).
 */
function documentImportJobs(doc: OpenAPIObject): void {
  const create = doc.paths?.['/v1/{tenantSlug}/users/import-jobs']?.post;
  if (create) {
    create.requestBody = {
      required: true,
      description: 'One user a line, each an item of `users` of POST users/import (`UserImportItem`); empty lines are ignored',
      content: { 'application/x-ndjson': { schema: { type: 'string' } } },
    };
  }
  const report = doc.paths?.['/v1/{tenantSlug}/users/import-jobs/{id}/errors']?.get;
  const success = report?.responses?.['200'] as ResponseObject | undefined;
  if (!success) return;
  success.description = 'The failure report, by line: one JSON object a line';
  success.headers = { 'Content-Disposition': { description: '`attachment; filename="import-errors-{id}.ndjson"`', schema: { type: 'string' } } };
  success.content = {
    'application/x-ndjson': {
      schema: {
        type: 'object',
        properties: { index: { type: 'integer', description: 'The line\'s position among the non-empty lines, from 0' }, reason: { type: 'string' } },
        required: ['index', 'reason'],
      },
    },
  };
}

/** Node answers a request it cannot parse (any path) with this 400 before any route runs. */
const unreadableResponses = {
  '400': {
    description: 'The request is not valid HTTP — `details.reason`: `malformed_http`, `headers_too_large`',
    content: json({ $ref: '#/components/schemas/ErrorEnvelope' }),
  },
};

/** The routes served outside tRPC: liveness, readiness and this document. */
function serviceRoutes(): Record<string, PathItemObject> {
  const unreadable = unreadableResponses;
  const base = { tags: ['service'], security: [] };
  return {
    '/health': {
      get: {
        ...base,
        operationId: 'service-health',
        summary: 'Liveness',
        description: 'Answers 200 while the process serves requests; checks nothing else.',
        responses: {
          '200': {
            description: 'The process is alive',
            content: json({ type: 'object', properties: { status: { type: 'string', const: 'ok' } }, required: ['status'], additionalProperties: false }),
          },
          ...unreadable,
        },
      },
    },
    '/ready': {
      get: {
        ...base,
        operationId: 'service-ready',
        summary: 'Readiness',
        description: 'Checks the database, and Redis when one is configured. Load balancers route traffic only on 200.',
        responses: {
          '200': { description: 'Every dependency answers', content: json(readinessSchema('ready')) },
          '503': { description: 'A dependency does not answer; `checks` says which', content: json(readinessSchema('not_ready')) },
          ...unreadable,
        },
      },
    },
    '/v1/openapi.json': {
      get: {
        ...base,
        operationId: 'service-openapi',
        summary: 'This OpenAPI document',
        description: 'Public and cacheable by documentation tools on any origin (`Access-Control-Allow-Origin: *`).',
        responses: {
          '200': {
            description: 'The OpenAPI 3.1 document',
            content: json({ type: 'object', description: 'An OpenAPI 3.1 document', properties: { openapi: { type: 'string' } }, required: ['openapi'] }),
          },
          ...unreadable,
        },
      },
    },
    '/v1/{tenantSlug}/branding/logo': { get: logoOperation('light') },
    '/v1/{tenantSlug}/branding/logo/dark': { get: logoOperation('dark') },
  };
}

/** `GET branding/logo` (`light`) and `GET branding/logo/dark`: the public logo routes (src/rest/branding-logo.ts). */
function logoOperation(variant: 'light' | 'dark'): OperationObject {
  const dark = variant === 'dark';
  return {
    tags: ['tenant'],
    security: [],
    operationId: dark ? 'tenant-branding-logo-dark' : 'tenant-branding-logo',
    summary: dark ? 'The workspace\'s logo for the dark theme, else its logo (public)' : 'The workspace\'s logo (public)',
    description:
      (dark
        ? 'The image set with `PUT /v1/{tenantSlug}/tenant/logo/dark`, or, without one, the logo (`GET branding/logo`). '
        : 'The image set with `PUT /v1/{tenantSlug}/tenant/logo` (PNG, JPEG, WebP or GIF). ') +
      'With a strong `ETag`, `Cache-Control: public, max-age=300` and `X-Content-Type-Options: nosniff`; `If-None-Match` with that ETag ' +
      `answers 304. Pages and mails link it as \`${dark ? 'darkLogoUrl' : 'logoUrl'}\` (with \`?v=\`, so a new logo shows at once).`,
    parameters: [
      { name: 'tenantSlug', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'v', in: 'query', required: false, description: 'The version the link names (the first 16 hex digits of the ETag); only for caches', schema: { type: 'string' } },
    ],
    responses: {
      '200': {
        description: 'The logo',
        content: Object.fromEntries(LOGO_CONTENT_TYPES.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
      },
      '304': { description: 'Not modified: the ETag given in `If-None-Match` is the logo\'s' },
      '404': { description: 'No live workspace with this slug, or no logo — `details.reason`: `not_found`', content: json({ $ref: '#/components/schemas/ErrorEnvelope' }) },
      ...unreadableResponses,
    },
  };
}

function readinessSchema(status: 'ready' | 'not_ready'): SchemaObject {
  return {
    type: 'object',
    properties: {
      status: { type: 'string', const: status },
      checks: {
        type: 'object',
        description: 'One entry per dependency (`database`, `redis` when configured)',
        additionalProperties: { type: 'string', enum: ['ok', 'down'] },
      },
    },
    required: ['status', 'checks'],
    additionalProperties: false,
  };
}

/**
 * Zod writes ±(2^53 − 1) as the bounds of every integer; they say nothing to a client and read as
 * real limits, so they are removed (a real bound, like `minimum: 1`, stays).
 */
function dropSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropSafeIntegerBounds(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  if (record.type === 'integer') {
    if (record.minimum === Number.MIN_SAFE_INTEGER) delete record.minimum;
    if (record.maximum === Number.MAX_SAFE_INTEGER) delete record.maximum;
  }
  for (const value of Object.values(record)) dropSafeIntegerBounds(value);
}

/**
 * The OpenAPI 3.1 description of every REST route (`info.version` 0.0.0), generated from the tRPC
 * procedures' `openapi` meta and Zod schemas, with each operation's own error responses and the
 * service routes. docs/api-contract.md explains how it is built and checked.
 * @param publicUrl base of the `servers` entry (`PUBLIC_URL`).
 * @throws Error when a procedure's meta is inconsistent (see `errorResponses`).
 */
export function buildOpenApiDocument(publicUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Tenant Identity API',
    description:
      'Multi-tenant identity and access: sign-up, sign-in, MFA, sessions, API keys, invites, tenant administration, audit. ' +
      'Every error is `{ code, message, details }`; `details.reason` names the cause and each operation lists the reasons it can give.',
    version: '0.0.0',
    baseUrl: publicUrl,
    securitySchemes: {
      Authorization: {
        type: 'http',
        scheme: 'bearer',
        description: 'A user access token (JWT) or an API key (`ak_live_…`, `ak_test_…`)',
      },
    },
  });
  applyProcedureMeta(doc);
  doc.info.license = { name: 'MIT', identifier: 'MIT' };
  doc.info.contact = { name: 'Tenant Identity maintainers', url: `${publicUrl}/v1/openapi.json` };
  // Relative: the API answers where this document is served from, whichever origin reads it.
  doc.servers = [{ url: '/', description: 'The origin serving this document' }];
  doc.tags = TAGS;
  doc.paths = { ...doc.paths, ...serviceRoutes() };
  documentCallbackHandOff(doc);
  documentAuditExport(doc);
  documentUserExport(doc);
  documentImportJobs(doc);
  const schemas = doc.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  doc.components = { ...doc.components, schemas: { ...schemas, ErrorEnvelope: ERROR_ENVELOPE_SCHEMA } };
  dropSafeIntegerBounds(doc);
  return doc;
}
