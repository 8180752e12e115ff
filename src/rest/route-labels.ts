import { appRouter } from '../routers/index.js';

/** A REST operation of the procedures: its method, its path as a pattern, and the procedure's name. */
interface RestOperation {
  method: string;
  pattern: RegExp;
  /** Fewer placeholders first, so `/users/export` wins over `/users/{userId}`. */
  placeholders: number;
  procedure: string;
}

interface ProcedureWithOpenApi {
  _def: { meta?: { openapi?: { method: string; path: string; enabled?: boolean } } };
}

let operations: RestOperation[] | undefined;

/** Every REST operation of the router, read once from the procedures' `openapi` meta. */
function restOperations(): RestOperation[] {
  if (operations) return operations;
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, ProcedureWithOpenApi> } })._def.procedures;
  operations = Object.entries(procedures)
    .flatMap(([procedure, { _def }]) => {
      const openapi = _def.meta?.openapi;
      if (!openapi || openapi.enabled === false) return [];
      const segments = openapi.path.split('/').map((segment) =>
        /^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      );
      return [{
        method: openapi.method.toUpperCase(),
        pattern: new RegExp(`^${segments.join('/')}/?$`),
        placeholders: (openapi.path.match(/\{/g) ?? []).length,
        procedure,
      }];
    })
    .sort((a, b) => a.placeholders - b.placeholders);
  return operations;
}

/** The endpoints of a workspace's OpenID provider (oidc-provider's routes, docs/oidc.md), by their first path segment. */
const PROVIDER_ENDPOINTS = new Set(['auth', 'token', 'jwks', 'me', 'session', 'request', 'reg', 'device', 'backchannel', 'interaction']);

/**
 * The metrics route label of a request no procedure named (docs/operations.md "Metrics"): the
 * procedure whose REST operation the method and path match (a request refused before its procedure
 * ran: malformed body, too large, rate limited, unknown workspace), `oidc.<endpoint>` for the
 * workspace's OpenID provider, or undefined. Never the raw path: the label set stays bounded.
 * @param method the HTTP method, any case.
 * @param path the request path without the query string.
 */
export function restRouteLabel(method: string, path: string): string | undefined {
  if (path.startsWith('/.well-known/')) return 'oidc.discovery';
  const provider = /^\/v1\/[^/]+\/oidc(?=\/|$)(?:\/([^/]+))?(?:\/([^/]+))?/.exec(path);
  if (provider) {
    const [, endpoint = '', next] = provider;
    if (endpoint === '.well-known') return 'oidc.discovery';
    if (endpoint === 'token' && (next === 'introspection' || next === 'revocation')) return `oidc.${next}`;
    // the hosted page's hand-off (`interaction/{uid}/details`, `/complete`) is two procedures at the provider's paths
    if (endpoint === 'interaction') return procedureOf(method, path) ?? 'oidc.interaction';
    return PROVIDER_ENDPOINTS.has(endpoint) ? `oidc.${endpoint}` : 'oidc.other';
  }
  return procedureOf(method, path);
}

/** The procedure whose REST operation the method (HEAD as GET) and path match, or undefined. */
function procedureOf(method: string, path: string): string | undefined {
  const upper = method.toUpperCase();
  const lookup = upper === 'HEAD' ? 'GET' : upper;
  return restOperations().find((op) => op.method === lookup && op.pattern.test(path))?.procedure;
}
