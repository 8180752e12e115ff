import { adminProcedure, adminSessionProcedure, tenantProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { clearSsoBindingCookie, newSsoBinding, readSsoBindingCookie, setSsoBindingCookie } from '../middleware/sso-binding-cookie.js';
import type { SsoConnectionView } from '../services/sso/sso-connection-service.js';
import { router } from '../trpc.js';
import { displayName, email, emailDomain, OK, okOutput, timestampOutput } from './schemas.js';
import { SIGN_IN_PER_IP } from '../services/rate-limits/rate-limit-rules.js';

const tags = ['enterprise sso'];
const readErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or connection', 429: 'Rate limited' };
const changeErrors = {
  ...readErrors,
  401: 'Not signed in, or a sign-in older than 10 minutes (`reauthentication_required`)',
  403: 'Not an admin, or an API key (`admin_session_required`)',
};
const changeReasons = { 401: ['reauthentication_required'] } as const;
/** What a provider given to create or change a connection can be refused for (SAML metadata, OpenID issuer and discovery). */
const PROVIDER_REASONS = [
  'invalid_saml_metadata', 'invalid_saml_certificate', 'invalid_sso_url', 'unknown_organization_role',
  'invalid_issuer', 'idp_issuer_not_allowed', 'idp_discovery_failed', 'issuer_mismatch',
] as const;

const certificateOutput = z.object({
  pem: z.string(), subject: z.string(), notAfter: timestampOutput, fingerprintSha256: z.string(),
});

/** A connection as the API shows it (docs/sso.md "Connections"). */
export const ssoConnectionOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    protocol: z.enum(['saml', 'oidc']),
    domains: z.array(z.string()),
    organizationId: z.string().nullable(),
    defaultOrganizationRoles: z.array(z.string()),
    providerPerformsMfa: z.boolean().meta({ description: 'True: a sign-in through this connection counts as multi-factor (the provider asks for a second factor)' }),
    saml: z.object({
      idpEntityId: z.string(), ssoUrl: z.string(), metadataUrl: z.string().nullable().meta({ description: 'Where the metadata was downloaded from, when given by URL' }),
      certificates: z.array(certificateOutput),
    }).nullable()
      .meta({ description: 'The SAML identity provider; null for an OpenID Connect connection' }),
    oidc: z.object({ issuer: z.string(), clientId: z.string() }).nullable()
      .meta({ description: 'The OpenID provider and the client registered there (never the secret); null for a SAML connection' }),
    sp: z.union([
      z.object({
        entityId: z.string().meta({ description: 'The service provider entity id (Audience) to enter at the identity provider' }),
        acsUrl: z.string().meta({ description: 'The assertion consumer service URL (HTTP-POST binding)' }),
        metadataUrl: z.string(),
        certificate: z.string().meta({ description: 'The SP certificate (PEM): verifies its signed AuthnRequests; assertions may be encrypted to it' }),
        signAuthnRequests: z.boolean(),
      }),
      z.object({ redirectUri: z.string().meta({ description: 'The redirect URI to register at the OpenID provider' }) }),
    ]).meta({ description: 'What to enter at the identity provider: SAML service-provider values, or the OpenID Connect redirect URI' }),
    createdAt: timestampOutput,
    updatedAt: timestampOutput,
  })
  .meta({ id: 'SsoConnection' });

function toOutput(view: SsoConnectionView): z.infer<typeof ssoConnectionOutput> {
  return {
    ...view,
    saml: view.saml && { ...view.saml, certificates: view.saml.certificates.map((cert) => ({ ...cert, notAfter: cert.notAfter.toISOString() })) },
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

const samlInput = z.union([
  z.object({ metadataXml: z.string().min(1).max(256 * 1024).meta({ description: 'The identity provider\'s SAML metadata (XML)' }) }).strict(),
  z.object({
    metadataUrl: z.string().trim().min(1).max(2048).meta({ description: 'Where to download the identity provider\'s SAML metadata now (https, public address)' }),
  }).strict(),
  z.object({
    entityId: z.string().trim().min(1).max(1024),
    ssoUrl: z.string().trim().min(1).max(2048).meta({ description: 'SingleSignOnService URL, HTTP-Redirect binding' }),
    certificate: z.string().min(1).max(16 * 1024).meta({ description: 'Signing certificate, PEM or base64' }),
  }).strict(),
]);

const oidcInput = z.object({
  issuer: z.string().trim().min(1).max(512).meta({ description: 'The OpenID provider\'s issuer identifier (discovery at /.well-known/openid-configuration)' }),
  clientId: z.string().trim().min(1).max(255),
  clientSecret: z.string().min(1).max(1024).meta({ description: 'Stored encrypted, never shown again' }),
}).strict();

const connectionFields = {
  name: displayName(100),
  domains: z.array(emailDomain).min(1).max(50),
  organizationId: z.uuid().nullable().optional(),
  defaultOrganizationRoles: z.array(z.string().min(1).max(64)).max(50).optional(),
  providerPerformsMfa: z.boolean().optional(),
  signAuthnRequests: z.boolean().optional().meta({ description: 'SAML: sign AuthnRequests with the connection\'s SP key' }),
};

const idInput = z.object({ id: z.uuid() });

/** `/v1/{tenantSlug}/sso-connections*` and `sso/start`: enterprise single sign-on (docs/sso.md). */
export const ssoRouter = router({
  list: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/{tenantSlug}/sso-connections', protect: true, tags, summary: 'List the enterprise SSO connections, oldest first', errorResponses: readErrors } })
    .output(z.object({ items: z.array(ssoConnectionOutput) }))
    .query(async ({ ctx }) => ({ items: (await ctx.services.ssoConnections.list(ctx.em, ctx.tenant)).map(toOutput) })),

  get: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/sso-connections/{id}', protect: true, tags,
        summary: 'Read one SSO connection, with its latest refused responses',
        description: '`recentFailures`: the latest 10 responses the assertion consumer service refused for this connection, newest first, with their reason (docs/sso.md "Security checks").',
        errorResponses: { ...readErrors, 400: 'id is not a UUID' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(z.object({
      connection: ssoConnectionOutput,
      recentFailures: z.array(z.object({ at: timestampOutput, reason: z.string(), message: z.string() })),
    }))
    .query(async ({ ctx, input }) => {
      const connection = toOutput(await ctx.services.ssoConnections.get(ctx.em, ctx.tenant, input.id));
      const failures = await ctx.services.ssoConnections.recentFailures(ctx.em, ctx.tenant.id, input.id);
      return { connection, recentFailures: failures.map((failure) => ({ ...failure, at: failure.at.toISOString() })) };
    }),

  test: adminProcedure
    .meta({
      rateLimit: { ip: SIGN_IN_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/sso-connections/{id}/test', protect: true, tags,
        summary: 'Try a connection: a sign-in at its identity provider that shows what the provider sends and signs no one in',
        description:
          'Answers the identity provider URL for this browser (it sets the `sso_binding_{tenantSlug}` cookie). The provider\'s answer is ' +
          'verified like any sign-in; the browser then lands on the console\'s connection page, `/app/{tenantSlug}/admin/sso/{id}`, with ' +
          '`#code=…` for `sso-connections/test-result`, or `#error=<reason>`.',
        errorResponses: { ...readErrors, 400: 'id is not a UUID, or an OpenID provider that cannot be reached (`idp_unavailable`)' },
      },
      errorReasons: { 400: ['idp_unavailable'], 404: ['not_found'] },
    })
    .input(idInput)
    .output(z.object({ redirectUrl: z.url() }))
    .mutation(async ({ ctx, input }) => {
      const binding = newSsoBinding();
      const redirectUrl = await ctx.services.ssoEntry.startTest(ctx.em, ctx.tenant, input.id, binding);
      setSsoBindingCookie(ctx.req, ctx.res, ctx.tenant.slug, binding);
      return { redirectUrl };
    }),

  testResult: adminProcedure
    .meta({
      rateLimit: { ip: SIGN_IN_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/sso-connections/test-result', protect: true, tags,
        summary: 'What the identity provider sent in a connection test (from the browser that started it, once)',
        errorResponses: { ...readErrors, 401: 'No or invalid credential, a used or expired code (`sso_completion_invalid`), another browser (`browser_mismatch`)' },
      },
      errorReasons: { 401: ['sso_completion_invalid', 'browser_mismatch'] },
    })
    .input(z.object({ code: z.string().min(1).max(256) }))
    .output(z.object({
      connectionId: z.string(),
      issuer: z.string(),
      subject: z.string(),
      email: z.string(),
      name: z.string().nullable(),
      authnContext: z.string().nullable(),
      attributes: z.record(z.string(), z.array(z.string())),
    }))
    .mutation(async ({ ctx, input }) => {
      const binding = readSsoBindingCookie(ctx.req, ctx.tenant.slug);
      clearSsoBindingCookie(ctx.req, ctx.res, ctx.tenant.slug);
      return ctx.services.ssoEntry.testResult(ctx.em, ctx.tenant, input.code, binding);
    }),

  create: adminSessionProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/sso-connections', protect: true, tags,
        summary: 'Connect a customer company\'s SAML or OpenID Connect identity provider for its email domains',
        description:
          'With `protocol: saml`, `saml` is the provider\'s metadata XML, or its entity id, single sign-on URL (HTTP-Redirect) and signing certificate; ' +
          'with `protocol: oidc`, `oidc` is its issuer (discovered now) and the client registered there (the secret is stored encrypted, never shown). ' +
          'A domain belongs to one connection of the workspace (409 `sso_domain_taken`). With `organizationId`, a person\'s first ' +
          'sign-in makes them a member with `defaultOrganizationRoles`. Needs a signed-in Admin whose sign-in is less than 10 minutes ' +
          'old (API keys 403 `admin_session_required`); audited (`SsoConnectionCreated`) and mailed to the other Admins. The answer ' +
          'holds `sp`: the values to enter at the identity provider (SAML entity id and ACS URL, or the OpenID redirect URI).',
        errorResponses: {
          ...changeErrors,
          400: 'Invalid input (`invalid_saml_metadata`, `invalid_saml_certificate`, `invalid_sso_url`, `unknown_organization_role`; OpenID: `invalid_issuer`, `idp_issuer_not_allowed`, `idp_discovery_failed`, `issuer_mismatch`)',
          404: 'Unknown tenant or organization', 409: 'A domain of another connection (`sso_domain_taken`)',
        },
      },
      errorReasons: {
        ...changeReasons, 400: [...PROVIDER_REASONS], 404: ['not_found'], 409: ['sso_domain_taken'],
      },
    })
    .input(z.object({
      ...connectionFields,
      protocol: z.enum(['saml', 'oidc']),
      saml: samlInput.optional().meta({ description: 'Required with protocol `saml`' }),
      oidc: oidcInput.optional().meta({ description: 'Required with protocol `oidc`' }),
    }).superRefine((value, ctx) => {
      if (value.protocol === 'saml' && !value.saml) ctx.addIssue({ code: 'custom', path: ['saml'], message: 'Required with protocol saml' });
      if (value.protocol === 'oidc' && !value.oidc) ctx.addIssue({ code: 'custom', path: ['oidc'], message: 'Required with protocol oidc' });
      if (value.protocol === 'saml' && value.oidc) ctx.addIssue({ code: 'custom', path: ['oidc'], message: 'Only with protocol oidc' });
      if (value.protocol === 'oidc' && value.saml) ctx.addIssue({ code: 'custom', path: ['saml'], message: 'Only with protocol saml' });
    }))
    .output(z.object({ connection: ssoConnectionOutput }))
    .mutation(async ({ ctx, input }) => {
      const by = { userId: ctx.principal.userId, sessionId: ctx.principal.sessionId };
      const { tenantSlug: _slug, saml, oidc, ...fields } = input;
      const connection = fields.protocol === 'saml'
        ? { ...fields, protocol: 'saml' as const, saml: saml! }
        : { ...fields, protocol: 'oidc' as const, oidc: oidc! };
      return { connection: toOutput(await ctx.services.ssoConnections.create(ctx.scope, connection, by)) };
    }),

  update: adminSessionProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/sso-connections/{id}', protect: true, tags,
        summary: 'Change an SSO connection (each field given replaces the stored one)',
        errorResponses: { ...changeErrors, 400: 'Invalid input, as on create, or the other protocol\'s provider (`sso_protocol_mismatch`)', 409: 'A domain of another connection (`sso_domain_taken`)' },
      },
      errorReasons: {
        ...changeReasons, 400: [...PROVIDER_REASONS, 'sso_protocol_mismatch'], 404: ['not_found'], 409: ['sso_domain_taken'],
      },
    })
    .input(idInput.extend({
      name: connectionFields.name.optional(), domains: connectionFields.domains.optional(), organizationId: connectionFields.organizationId,
      defaultOrganizationRoles: connectionFields.defaultOrganizationRoles, providerPerformsMfa: connectionFields.providerPerformsMfa,
      signAuthnRequests: connectionFields.signAuthnRequests, saml: samlInput.optional(),
      oidc: oidcInput.extend({ clientSecret: oidcInput.shape.clientSecret.optional() }).optional(),
    }).superRefine((value, ctx) => {
      const fields = ['name', 'domains', 'organizationId', 'defaultOrganizationRoles', 'providerPerformsMfa', 'signAuthnRequests', 'saml', 'oidc'] as const;
      if (!fields.some((field) => value[field] !== undefined)) ctx.addIssue({ code: 'custom', path: [], message: 'Give at least one field to change' });
    }))
    .output(z.object({ connection: ssoConnectionOutput }))
    .mutation(async ({ ctx, input }) => {
      const by = { userId: ctx.principal.userId, sessionId: ctx.principal.sessionId };
      const { tenantSlug: _slug, id, ...patch } = input;
      return { connection: toOutput(await ctx.services.ssoConnections.update(ctx.scope, id, patch, by)) };
    }),

  delete: adminSessionProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/v1/{tenantSlug}/sso-connections/{id}', protect: true, tags, summary: 'Delete an SSO connection (its people keep their accounts)', errorResponses: changeErrors },
      errorReasons: { ...changeReasons, 404: ['not_found'] },
    })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.ssoConnections.delete(ctx.scope, input.id, { userId: ctx.principal.userId, sessionId: ctx.principal.sessionId });
      return OK;
    }),

  start: tenantProcedure
    .meta({
      // the SAML ACS and the OpenID Connect callback (routes outside the procedures) spend the same budget (src/rest/sso-routes.ts)
      rateLimit: { ip: SIGN_IN_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/sso/start', protect: false, tags,
        summary: 'Start a single sign-on for an email address of a connection\'s domain',
        description:
          'Answers the identity provider URL to send the browser to (an AuthnRequest, HTTP-Redirect binding), and sets the HttpOnly ' +
          '`sso_binding_{tenantSlug}` cookie: the sign-in completes only in the browser that holds it. The provider posts its answer to the ' +
          'connection\'s assertion consumer service, which sends the browser to the hosted page `/app/{tenantSlug}/sso-callback`. ' +
          '`returnTo`: a path of this service to open afterwards.',
        errorResponses: {
          400: 'Invalid input, or an OpenID provider that cannot be reached (`idp_unavailable`)', 404: 'Unknown tenant, or no connection for the address\'s domain (`sso_connection_not_found`)',
          429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['idp_unavailable'], 404: ['sso_connection_not_found'] },
    })
    .input(z.object({ email, returnTo: z.string().max(2048).regex(/^\/([^/\\\s][^\s\\]*)?$/, 'must be a path of this service').optional() }))
    .output(z.object({ redirectUrl: z.url() }))
    .mutation(async ({ ctx, input }) => {
      const binding = newSsoBinding();
      const redirectUrl = await ctx.services.ssoEntry.start(ctx.em, ctx.tenant, input.email, binding, input.returnTo);
      setSsoBindingCookie(ctx.req, ctx.res, ctx.tenant.slug, binding);
      return { redirectUrl };
    }),
});
