import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { appRouter } from '../routers/index.js';

/**
 * The OpenAPI 3 description of every REST route (`info.version` 0.0.0), generated
 * from the tRPC procedures' `openapi` meta and Zod schemas, plus the service routes.
 * @param publicUrl base of the `servers` entry.
 */
export function buildOpenApiDocument(publicUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Tenant Identity API',
    description:
      'Multi-tenant identity and access: sign-up, sign-in, MFA, sessions, API keys, invites, tenant administration, audit. ' +
      'Every error is `{ code, message, details }`.',
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
  const service = (summary: string, example: Record<string, string>) => ({
    get: {
      tags: ['service'],
      summary,
      responses: {
        '200': {
          description: 'OK',
          content: { 'application/json': { schema: { type: 'object', properties: { status: { type: 'string' } }, example } } },
        },
      },
    },
  });
  doc.paths = {
    ...doc.paths,
    '/health': service('Liveness', { status: 'ok' }),
    '/ready': service('Readiness: 200 when the database (and Redis when configured) answers, else 503', { status: 'ready' }),
    '/v1/openapi.json': service('This document', {}),
  };
  return doc;
}
