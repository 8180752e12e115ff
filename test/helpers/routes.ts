import { z } from 'zod';
import { appRouter } from '../../src/routers/index.js';

/**
 * Who may call a procedure (docs/api-rules.md "Credentials and sessions"):
 * - `public`: no bearer token; any credential sent is ignored.
 * - `user`: a user's access token only (`/me*`, `auth/logout-all`, `mfa/*`); an API key gets 401
 *   `user_token_required`.
 * - `admin`: tenant administration and invites: an Admin user or an API key of the tenant; a Member 403.
 * - `securityAdmin`: changes of the tenant's security: an Admin user or an `ak_live_` key; a Member 403,
 *   an `ak_test_` key 403 `live_key_required` (`securityAdminProcedure`).
 * - `adminUser`: an Admin *user* only (tenant deletion): a Member 403, an API key 401 `user_token_required`.
 * - `adminSession`: a signed-in Admin *user* only (SSO connections: whoever controls one decides who
 *   signs in, docs/sso.md): a Member 403 `admin_required`, an API key 403 `admin_session_required`.
 * - `authenticated`: any credential of the tenant (user of either role, or API key).
 */
export type AccessClass = 'public' | 'user' | 'admin' | 'securityAdmin' | 'adminUser' | 'adminSession' | 'authenticated';

/**
 * The expected access class of every procedure, keyed by tRPC path: every procedure name,
 * whether or not its router is merged yet. A procedure of `appRouter` missing here fails the
 * authorization matrix: a new route must be classified before it can ship.
 */
export const ACCESS_CLASSES: Record<string, AccessClass> = {
  'tenants.create': 'public',
  'auth.signup': 'public',
  'auth.login': 'public',
  'auth.refresh': 'public',
  'auth.logout': 'public',
  'auth.requestEmailOtp': 'public',
  'auth.totpInitialEnroll': 'public',
  'auth.totpInitialVerify': 'public',
  'auth.mfaComplete': 'public',
  'idp.start': 'public',
  'idp.callback': 'public',
  'idp.signInOptions': 'public',
  'idp.startLink': 'user',
  'invites.accept': 'public',
  'auth.verifyEmail': 'public',
  'auth.verifyEmailLink': 'public',
  'auth.requestEmailVerification': 'public',
  'auth.requestPasswordReset': 'public',
  'auth.completePasswordReset': 'public',
  'auth.confirmEmailChange': 'public',
  'browser.refresh': 'public',
  'browser.logout': 'public',
  'browser.idpStart': 'public',
  'browser.idpCallback': 'public',
  'oidcInteraction.details': 'public',
  'auth.passkeyOptions': 'public',
  'auth.passkeyVerify': 'public',

  'auth.logoutAll': 'user',
  'me.get': 'user',
  'me.update': 'user',
  'me.delete': 'user',
  'me.changePassword': 'user',
  'mfa.totpEnroll': 'user',
  'mfa.totpVerify': 'user',
  'me.exportMe': 'user',
  'mfa.passkeyRegistrationOptions': 'user',
  'mfa.passkeyRegistrationVerify': 'user',
  'me.passkeys': 'user',
  'me.deletePasskey': 'user',
  'me.listSessions': 'user',
  'me.revokeSession': 'user',
  'mfa.recoveryCodes': 'user',
  'mfa.totpDisable': 'user',
  'me.requestEmailChange': 'user',
  'oidcInteraction.complete': 'user',

  'users.disableTotp': 'securityAdmin',
  'users.sendPasswordReset': 'admin',
  'users.sendVerificationMail': 'admin',
  'users.restore': 'securityAdmin',
  'users.create': 'securityAdmin',
  'users.unlock': 'securityAdmin',
  'applications.list': 'admin',
  'applications.get': 'admin',
  'applications.create': 'securityAdmin',
  'applications.update': 'securityAdmin',
  'applications.delete': 'securityAdmin',
  'applications.rotateSecret': 'securityAdmin',
  'users.listSessions': 'admin',
  'users.revokeSession': 'admin',
  'idp.putCredentials': 'securityAdmin',
  'idp.deleteCredentials': 'securityAdmin',
  'invites.list': 'admin',
  'invites.create': 'admin',
  'invites.revoke': 'admin',
  'invites.resend': 'admin',
  'apiKeys.list': 'admin',
  'apiKeys.create': 'securityAdmin',
  'apiKeys.revoke': 'securityAdmin',
  'audit.list': 'admin',
  'audit.export': 'admin',
  'audit.activity': 'admin',
  'tenant.get': 'admin',
  'tenant.update': 'securityAdmin',
  'tenant.setLogo': 'securityAdmin',
  'tenant.deleteLogo': 'securityAdmin',
  'tenant.setDarkLogo': 'securityAdmin',
  'tenant.deleteDarkLogo': 'securityAdmin',
  'users.list': 'admin',
  'users.get': 'admin',
  'users.delete': 'securityAdmin',
  'users.update': 'securityAdmin',
  'users.exportUser': 'admin',
  'users.import': 'securityAdmin',
  'users.export': 'admin',
  'users.createImportJob': 'securityAdmin',
  'users.getImportJob': 'admin',
  'users.importJobErrors': 'admin',
  'webhooks.list': 'admin',
  'webhooks.create': 'securityAdmin',
  'webhooks.update': 'securityAdmin',
  'webhooks.delete': 'securityAdmin',
  'webhooks.rotateSecret': 'securityAdmin',
  'webhooks.test': 'admin',
  'webhooks.deliveries': 'admin',

  'apiResources.list': 'admin',
  'apiResources.get': 'admin',
  'apiResources.create': 'securityAdmin',
  'apiResources.update': 'securityAdmin',
  'apiResources.delete': 'securityAdmin',
  'roles.list': 'admin',
  'roles.get': 'admin',
  'roles.create': 'securityAdmin',
  'roles.update': 'securityAdmin',
  'roles.delete': 'securityAdmin',
  'users.roles': 'admin',
  'users.setRoles': 'securityAdmin',
  'applications.roles': 'admin',
  'applications.setRoles': 'securityAdmin',
  'organizations.list': 'admin',
  'organizations.get': 'admin',
  'organizations.create': 'securityAdmin',
  'organizations.update': 'securityAdmin',
  'organizations.delete': 'securityAdmin',
  'organizations.listMembers': 'admin',
  'organizations.addMember': 'securityAdmin',
  'organizations.updateMember': 'securityAdmin',
  'organizations.removeMember': 'securityAdmin',
  'organizationRoles.list': 'admin',
  'organizationRoles.get': 'admin',
  'organizationRoles.create': 'securityAdmin',
  'organizationRoles.update': 'securityAdmin',
  'organizationRoles.delete': 'securityAdmin',
  'me.organizations': 'user',
  'me.acceptInvite': 'user',

  'tenant.deleteTenant': 'adminUser',

  'roles.members': 'admin',
  'sso.list': 'admin',
  'sso.get': 'admin',
  'sso.create': 'adminSession',
  'sso.update': 'adminSession',
  'sso.delete': 'adminSession',
  'sso.test': 'admin',
  'sso.testResult': 'admin',
  'sso.start': 'public',
  'browser.ssoComplete': 'public',
};

/**
 * Procedures served on `/trpc` only, by design: the hosted pages' cookie session (`browser.*`) reads
 * a cookie scoped to the path `/trpc`, so a REST route could never receive it. test/sessions/browser-session.test.ts
 * covers them (no cookie, another workspace's token, replay, sign-out); the provider sign-in bound to the
 * browser (`browser.idpStart` / `browser.idpCallback`, cookie transport only) is covered in test/idp/idp.test.ts,
 * the SSO completion bound to the browser (`browser.ssoComplete`) in test/sso.
 */
export const TRPC_ONLY_PROCEDURES: ReadonlySet<string> = new Set(['browser.refresh', 'browser.logout', 'browser.idpStart', 'browser.idpCallback', 'browser.ssoComplete']);

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One REST route of the service as the router declares it. */
export interface RouteInfo {
  /** tRPC path, e.g. `auth.login`. */
  procedure: string;
  /** tRPC procedure type: how the `/trpc` endpoint is called (GET for queries, POST for mutations). */
  type: 'query' | 'mutation' | 'subscription';
  method: HttpMethod;
  /** OpenAPI path template, e.g. `/v1/{tenantSlug}/api-keys/{id}`. */
  path: string;
  /** `meta.openapi.protect`. */
  protect: boolean;
  /** Names of the `{…}` parameters of `path`. */
  pathParams: string[];
  /** True when the input travels in a JSON body (POST, PUT, PATCH); else in the query string. */
  usesBody: boolean;
  /** The procedure's inputs merged into one object schema (as the REST adapter merges them). */
  input: z.ZodObject;
}

interface ProcedureLike {
  _def: { type: RouteInfo['type']; inputs: z.ZodObject[]; meta?: { openapi?: { method: HttpMethod; path: string; protect?: boolean; enabled?: boolean } } };
}

/** Every procedure of `appRouter` exposed over REST, read from the router itself. */
export function listRoutes(): RouteInfo[] {
  const procedures = appRouter._def.procedures as unknown as Record<string, ProcedureLike>;
  return Object.entries(procedures)
    .filter(([, p]) => p._def.meta?.openapi && p._def.meta.openapi.enabled !== false)
    .map(([procedure, p]) => {
      const openapi = p._def.meta!.openapi!;
      const input = p._def.inputs.reduce<z.ZodObject>((merged, next) => merged.merge(next), z.object({}));
      return {
        procedure,
        type: p._def.type,
        method: openapi.method,
        path: openapi.path,
        protect: openapi.protect !== false,
        pathParams: [...openapi.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        usesBody: openapi.method === 'POST' || openapi.method === 'PUT' || openapi.method === 'PATCH',
        input,
      };
    })
    .sort((a, b) => a.procedure.localeCompare(b.procedure));
}

/** Every procedure of `appRouter` (REST-exposed or not), to detect one that escapes the matrix. */
export function listProcedureNames(): string[] {
  return Object.keys(appRouter._def.procedures).sort();
}

/** The JSON Schema (input side) of a route's merged input. */
export function inputJsonSchema(route: RouteInfo): JsonSchema {
  return z.toJSONSchema(route.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/** The subset of JSON Schema (draft 2020-12) that `z.toJSONSchema` emits for this service's inputs. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  default?: unknown;
}

/** A string with lone UTF-16 surrogates replaced by U+FFFD, as a browser sends them in a URL. */
function wellFormed(value: string): string {
  return value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Fills a path template with values (percent-encoded). */
export function fillPath(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(wellFormed(String(values[name] ?? ''))));
}

/** Splits an input object into the request the REST façade expects: path, query string, body. */
export function toRequest(route: RouteInfo, input: Record<string, unknown>): { url: string; body: Record<string, unknown> | undefined } {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (!route.pathParams.includes(key)) rest[key] = value;
  let url = fillPath(route.path, input);
  if (route.usesBody) return { url, body: rest };
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) query.append(key, typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item));
  }
  const qs = query.toString();
  if (qs) url += `?${qs}`;
  return { url, body: undefined };
}

/** What the server parses for a request built by `toRequest`: JSON round-trip, or strings from the query. */
export function inputAsServerSees(route: RouteInfo, input: Record<string, unknown>): Record<string, unknown> {
  const { url, body } = toRequest(route, input);
  const pathValues: Record<string, string> = {};
  for (const name of route.pathParams) pathValues[name] = String(input[name] ?? '');
  if (body !== undefined) return { ...(JSON.parse(JSON.stringify(body)) as Record<string, unknown>), ...pathValues };
  const query: Record<string, unknown> = {};
  const params = new URL(url, 'http://x').searchParams;
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    // Express's query parser gives repeated keys as an array; the adapter drops empty values.
    if (all.length === 1 && all[0] === '') continue;
    query[key] = all.length > 1 ? all : all[0];
  }
  return { ...query, ...pathValues };
}
