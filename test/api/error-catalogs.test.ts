import { describe, expect, it } from 'vitest';
import { ApiError, defineErrorCatalog, ERROR_STATUS, reasonsOf, REQUEST_REASONS } from '../../src/lib/errors.js';
import type { ProcedureMeta } from '../../src/lib/procedure-meta.js';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';
import { appRouter } from '../../src/routers/index.js';
import { SESSION_ERRORS } from '../../src/errors/session.js';
import { USER_ERRORS } from '../../src/errors/user.js';

/**
 * Errors carry their own words (docs/architecture.md "Errors"): a catalog entry declares its code,
 * `details.reason` and message once and throw sites only name it; procedure kinds add their own
 * reasons to the OpenAPI document.
 */
describe('error catalogs', () => {
  const catalog = defineErrorCatalog({
    plain: { code: 'CONFLICT', reason: REQUEST_REASONS.notFound, message: 'A fixed text' },
    worded: {
      code: 'BAD_REQUEST', reason: REQUEST_REASONS.validationFailed,
      message: ({ limit }: { limit: number; field: string }) => `At most ${limit}`,
      details: ({ field }: { limit: number; field: string }) => ({ field }),
    },
  });

  it('builds an ApiError with the entry\'s code, reason and message', () => {
    const err = catalog.plain();
    expect(err).toBeInstanceOf(ApiError);
    expect({ code: err.code, message: err.message, details: err.details }).toEqual({ code: 'CONFLICT', message: 'A fixed text', details: { reason: 'not_found' } });
  });

  it('words the message and the extra details from the typed arguments', () => {
    const err = catalog.worded({ limit: 3, field: 'name' });
    expect({ code: err.code, message: err.message, details: err.details }).toEqual({
      code: 'BAD_REQUEST', message: 'At most 3', details: { reason: 'validation_failed', field: 'name' },
    });
  });

  it('gives each factory its reason and code, and reasonsOf maps entry names to reasons', () => {
    expect([catalog.worded.reason, catalog.worded.code]).toEqual(['validation_failed', 'BAD_REQUEST']);
    expect(reasonsOf(catalog)).toEqual({ plain: 'not_found', worded: 'validation_failed' });
  });

  it('answers the same envelope as before for the feature catalogs', () => {
    const short = USER_ERRORS.passwordTooShort({ minLength: 14 });
    expect({ code: short.code, message: short.message, details: short.details }).toEqual({
      code: 'BAD_REQUEST', message: 'The password must have at least 14 characters', details: { reason: 'password_too_short', minLength: 14 },
    });
    const reauth = SESSION_ERRORS.reauthenticationRequired({ change: 'change your second factors', maxAgeSeconds: 600 });
    expect({ code: reauth.code, message: reauth.message, details: reauth.details }).toEqual({
      code: 'UNAUTHORIZED', message: 'Sign in again to change your second factors', details: { reason: 'reauthentication_required', maxAgeSeconds: 600 },
    });
    for (const factory of Object.values(SESSION_ERRORS)) expect(Object.keys(ERROR_STATUS)).toContain(factory.code);
  });
});

describe('procedure kinds document their reasons', () => {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, { _def: { meta?: ProcedureMeta } }> } })._def.procedures;
  const document = buildOpenApiDocument('http://127.0.0.1');

  /** The `details.reason` enum the document gives an operation at a status. */
  function documentedReasons(procedurePath: string, status: number): string[] {
    const openapi = procedures[procedurePath]!._def.meta!.openapi!;
    const operation = (document.paths?.[openapi.path] as Record<string, { responses: Record<string, unknown> }>)[openapi.method.toLowerCase()]!;
    const schema = (operation.responses[String(status)] as { content: { 'application/json': { schema: { properties: { details: { properties: { reason: { enum: string[] } } } } } } } })
      .content['application/json'].schema;
    return schema.properties.details.properties.reason.enum;
  }

  it.each([
    ['webhooks.list', 403, ['admin_required']],
    ['webhooks.create', 403, ['admin_required', 'live_key_required']],
    ['me.get', 401, ['user_token_required']],
  ] as const)('%s lists %s %j without its router listing them', (procedurePath, status, reasons) => {
    const own = procedures[procedurePath]!._def.meta!.errorReasons?.[status] ?? [];
    for (const reason of reasons) {
      expect(own).not.toContain(reason);
      expect(documentedReasons(procedurePath, status)).toContain(reason);
    }
  });

  it('adds no kind reason to a route of another kind', () => {
    expect(documentedReasons('auth.login', 403)).not.toContain('admin_required');
  });
});
