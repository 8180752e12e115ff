import { z } from 'zod';
import { adminProcedure } from '../middleware/auth.js';
import { tenantProcedure } from '../middleware/tenant.js';
import { readIdpBindingCookie } from '../rest/idp-binding-cookie.js';
import { idpSettingsView } from '../services/idp/idp-service.js';
import { router } from '../trpc.js';
import { OK, okOutput, sessionOutput, toSession } from './schemas.js';

const tags = ['idp'];

/** docs/api-rules.md "Limits": identity-provider clientId and clientSecret, 1 to 512 characters each. */
const idpCredential = z.string().min(1).max(512);

/** docs/idp.md "A provider per tenant": most allowed email domains per tenant. */
export const MAX_ALLOWED_EMAIL_DOMAINS = 50;

/** A DNS host name as an email domain: lower-cased, labels of letters, digits and inner hyphens, a dot at least. */
const emailDomain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a domain name such as example.com');

/**
 * The authorization response of RFC 6749 §4.1.2 / §4.1.2.1 as docs/idp.md lists it, plus the RFC 9207
 * `iss` parameter that providers such as oidc-provider add. Upper bounds keep abuse cheap.
 */
export const callbackInput = z.object({
  code: z.string().min(1).max(4096).optional(),
  state: z.string().min(1).max(1024).optional(),
  error: z.string().min(1).max(256).optional(),
  error_description: z.string().max(4096).optional(),
  iss: z.string().min(1).max(2048).optional().meta({ description: 'RFC 9207 issuer identifier, when the provider sends one' }),
});

export const idpRouter = router({
  /**
   * What the sign-in page may offer (docs/web.md): `{ idpSignIn }`, true when the tenant has provider
   * credentials. Public: it says nothing that `oauth/idp/start` does not already answer; no client id.
   */
  signInOptions: tenantProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/sign-in-options', protect: false, tags,
        summary: 'The sign-in methods a sign-in page can offer (public)',
        description: '`idpSignIn`: whether sign-in with the external identity provider is configured (oauth/idp/start).',
        errorResponses: { 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(z.object({ idpSignIn: z.boolean() }))
    .query(({ ctx }) => ({ idpSignIn: idpSettingsView(ctx.tenant).idpOauthEnabled })),

  start: tenantProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/oauth/idp/start', protect: false, tags,
        summary: 'Start sign-in with the external identity provider (OpenID Connect, authorization code + PKCE)',
        description: 'Send the browser to `authorizationUrl`; the provider redirects it to oauth/idp/callback. '
          + 'The state, nonce and PKCE verifier are kept server-side, single use, for 10 minutes.',
        errorResponses: { 400: 'Not configured (`idp_not_configured`) or provider unreachable (`idp_unavailable`)', 404: 'Unknown tenant' },
      },
      errorReasons: { 400: ['idp_not_configured', 'idp_unavailable'] },
    })
    .output(z.object({ authorizationUrl: z.url() }))
    .query(async ({ ctx }) => ({ authorizationUrl: await ctx.services.idp.start(ctx.em, ctx.tenant) })),

  callback: tenantProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/oauth/idp/callback', protect: false, tags,
        summary: 'Complete sign-in with the external identity provider; returns a session',
        description: 'A browser holding the `idp_binding_{slug}` cookie of a sign-in started by the hosted pages is sent on '
          + '(303) to the page `/app/{slug}/idp-callback`, which completes it. A state started that way is refused here without '
          + 'that cookie (401 `browser_mismatch`). '
          + 'Signs in the user linked to the provider account, or links the user with the same provider-verified '
          + 'email (an account whose email was never verified is taken over: its password, factors and sessions are removed), '
          + 'or creates a Member. When the tenant MFA policy needs a second factor and the ID token `amr` does not show one, '
          + 'answers 401 `mfa_required` with details.methods and a single-use details.mfaToken (5 minutes) for auth/mfa/complete. '
          + 'details.reason: `idp_error`, `invalid_state`, `state_reused`, `state_expired`, '
          + '`missing_code`, `idp_not_configured`, `idp_unavailable`, `issuer_mismatch`, `code_exchange_failed`, `id_token_invalid`, '
          + '`idp_email_domain_not_allowed`, '
          + '`idp_email_missing`, `idp_email_unverified`, `user_suspended`, `email_not_verified`, `mfa_required`, `browser_mismatch`.',
        errorResponses: {
          400: 'Bad, reused or expired state; missing code; not configured; provider unreachable',
          401: 'Provider error, refused code exchange, invalid ID token, unusable account, `browser_mismatch` or `mfa_required`',
          404: 'Unknown tenant',
          429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['invalid_state', 'missing_code', 'state_reused', 'state_expired', 'idp_not_configured', 'idp_unavailable'], 401: ['idp_error', 'code_exchange_failed', 'id_token_invalid', 'issuer_mismatch', 'idp_email_domain_not_allowed', 'idp_email_missing', 'idp_email_unverified', 'user_suspended', 'email_not_verified', 'mfa_required', 'browser_mismatch'] },
    })
    .input(callbackInput)
    .output(sessionOutput)
    .query(async ({ ctx, input }) => {
      const binding = readIdpBindingCookie(ctx.req, ctx.tenant.slug);
      const { user, tokens } = await ctx.services.idp.callback(ctx.em, ctx.tenant, input, ctx.meta, binding);
      return toSession(user, tokens);
    }),

  putCredentials: adminProcedure
    .meta({
      openapi: {
        method: 'PUT', path: '/v1/{tenantSlug}/oauth/idp/credentials', protect: true, tags,
        summary: 'Set the tenant\'s identity provider: client id and secret (never returned), optional own issuer and email domains',
        description: 'Replaces the whole configuration. `issuer` (optional): the tenant\'s own OpenID provider (enterprise SSO); '
          + 'omitted, the deployment\'s `IDP_ISSUER` applies. It must be `https://` (`http://` only on a loopback host with '
          + '`IDP_ALLOW_PRIVATE_ISSUERS`), without credentials, query or fragment, and not on a private address; its OpenID '
          + 'discovery document is fetched now and must name the same issuer, else 400 and nothing is saved. '
          + '`allowedEmailDomains` (optional, at most 50): a provider sign-in whose verified email is of another domain is refused. '
          + 'GET tenant shows `idpRedirectUri`, the redirect URI to register at the provider.',
        errorResponses: {
          400: 'Invalid body, unusable issuer (`invalid_issuer`, `idp_issuer_not_allowed`), discovery failed (`idp_discovery_failed`, `issuer_mismatch`)',
          401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['invalid_issuer', 'idp_issuer_not_allowed', 'idp_discovery_failed', 'issuer_mismatch'], 403: ['admin_required'] },
    })
    .input(z.object({
      clientId: idpCredential,
      clientSecret: idpCredential,
      issuer: z.string().min(1).max(512).optional().meta({ description: 'OpenID issuer identifier of the tenant\'s own provider; omitted: IDP_ISSUER' }),
      allowedEmailDomains: z.array(emailDomain).max(MAX_ALLOWED_EMAIL_DOMAINS).optional()
        .meta({ description: 'Email domains a provider sign-in must come from (exact, lower-cased); omitted or empty: any' }),
    }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.idp.putCredentials(ctx.em, ctx.tenant, input, ctx.actor, ctx.meta);
      return OK;
    }),

  deleteCredentials: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/oauth/idp/credentials', protect: true, tags,
        summary: 'Remove the identity-provider credentials, turning the sign-in off',
        errorResponses: { 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required'] },
    })
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      await ctx.services.idp.deleteCredentials(ctx.em, ctx.tenant, ctx.actor, ctx.meta);
      return OK;
    }),
});
