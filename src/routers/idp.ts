import { securityAdminProcedure, tenantProcedure, userProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { BRAND_DISPLAYS, SIGNUP_POLICIES } from '../entities/tenant.js';
import { LOCALES } from '../lib/locales.js';
import { brandingOf } from '../services/branding/branding.js';
import { readIdpBindingCookie } from '../middleware/idp-binding-cookie.js';
import { idpSettingsView } from '../services/idp/idp-service.js';
import { router } from '../trpc.js';
import { emailDomain, OK, okOutput, sessionOutput, toSession } from './schemas.js';
import { SIGN_IN_PER_IP } from '../services/rate-limits/rate-limit-rules.js';

const tags = ['idp'];

/** docs/api-rules.md "Limits": identity-provider clientId and clientSecret, 1 to 512 characters each. */
const idpCredential = z.string().min(1).max(512);

/** docs/idp.md "A provider per tenant": most allowed email domains per tenant. */
export const MAX_ALLOWED_EMAIL_DOMAINS = 50;


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
      rateLimit: { ip: SIGN_IN_PER_IP },
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/sign-in-options', protect: false, tags,
        summary: 'The sign-in methods a sign-in page can offer (public)',
        description: '`idpSignIn`: whether sign-in with the external identity provider is configured (oauth/idp/start). ' +
          '`workspaceName`: the workspace\'s name, for the page to show. `defaultLocale`: the workspace\'s default language, ' +
          'which the pages speak when the browser asks for none they offer. `branding`: the display name, logo paths (light and dark theme), how the header shows them, button ' +
          'colour and support link the pages show (docs/web.md "Branding"). `signupPolicy`, `signupEmailDomains` (the domains ' +
          'sign-up is open to under `Domains`, else empty) and `passwordMinLength`: what the sign-up page offers and says. ' +
          '`enterpriseSso`: whether the workspace has single sign-on connections, so a page first tries `sso/start` with the address.',
        errorResponses: { 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(
      z.object({
        idpSignIn: z.boolean(),
        workspaceName: z.string(),
        defaultLocale: z.enum(LOCALES),
        branding: z.object({
          displayName: z.string(),
          logoUrl: z.string().nullable(),
          darkLogoUrl: z.string().nullable().meta({ description: 'The dark theme\'s logo; null: the dark theme shows `logoUrl`' }),
          brandDisplay: z.enum(BRAND_DISPLAYS).meta({ description: 'How the header shows the workspace: logo and name, logo only (alt text the name), name only' }),
          primaryColor: z.string().nullable(),
          supportUrl: z.string().nullable(),
        }),
        signupPolicy: z.enum(SIGNUP_POLICIES),
        signupEmailDomains: z.array(z.string()).meta({ description: 'Under `Domains`: the email domains sign-up is open to; else empty' }),
        passwordMinLength: z.number().int().meta({ description: 'The shortest password the workspace accepts (`passwordPolicy.minLength`)' }),
        enterpriseSso: z.boolean().meta({ description: 'True when some email domains sign in at a company identity provider (`sso/start`)' }),
      }),
    )
    .query(async ({ ctx }) => ({
      idpSignIn: idpSettingsView(ctx.tenant).idpOauthEnabled,
      workspaceName: ctx.tenant.name,
      defaultLocale: ctx.tenant.defaultLocale,
      branding: brandingOf(ctx.tenant, ''),
      signupPolicy: ctx.tenant.signupPolicy,
      signupEmailDomains: ctx.tenant.signupPolicy === 'Domains' ? ctx.tenant.signupEmailDomains : [],
      passwordMinLength: ctx.tenant.passwordMinLength,
      enterpriseSso: await ctx.services.ssoConnections.hasAny(ctx.em, ctx.tenant.id),
    })),

  start: tenantProcedure
    .meta({
      rateLimit: { ip: SIGN_IN_PER_IP },
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
      rateLimit: { ip: SIGN_IN_PER_IP },
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/oauth/idp/callback', protect: false, tags,
        summary: 'Complete sign-in with the external identity provider; returns a session',
        description: 'A browser holding the `idp_binding_{slug}` cookie of a sign-in started by the hosted pages is sent on '
          + '(303) to the page `/app/{slug}/idp-callback`, which completes it. A state started that way is refused here without '
          + 'that cookie (401 `browser_mismatch`). '
          + 'Signs in the user linked to the provider account; in a link flow (me/idp/link) links it to the user who started it, '
          + 'when the provider-verified email is that user\'s own; else creates a Member, or takes over an account with that email '
          + 'that was never verified (its password, factors and sessions are removed). An account with a verified email is never '
          + 'linked by the email alone (401 `idp_link_required`: its owner signs in and links from me/idp/link). '
          + 'When the tenant MFA policy needs a second factor and the ID token `amr` does not show one (or the user has an own '
          + 'TOTP factor and the tenant\'s `idpMfaTrust` is off), '
          + 'answers 401 `mfa_required` with details.methods and a single-use details.mfaToken (5 minutes) for auth/mfa/complete. '
          + 'details.reason: `idp_error`, `invalid_state`, `state_reused`, `state_expired`, '
          + '`missing_code`, `idp_not_configured`, `idp_unavailable`, `issuer_mismatch`, `code_exchange_failed`, `id_token_invalid`, '
          + '`idp_email_domain_not_allowed`, '
          + '`idp_email_missing`, `idp_email_unverified`, `user_suspended`, `email_not_verified`, `mfa_required`, `browser_mismatch`, '
          + '`idp_link_required`, `idp_link_email_mismatch`, `idp_identity_linked_elsewhere`.',
        errorResponses: {
          400: 'Bad, reused or expired state; missing code; not configured; provider unreachable',
          401: 'Provider error, refused code exchange, invalid ID token, unusable account, `browser_mismatch`, `idp_link_required` or `mfa_required`',
          403: 'A new account the workspace\'s sign-up policy refuses (`signup_disabled`, `signup_domain_not_allowed`)',
          404: 'Unknown tenant',
          409: 'The provider account is linked to another user (`idp_identity_linked_elsewhere`, link flow)',
          429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['invalid_state', 'missing_code', 'state_reused', 'state_expired', 'idp_not_configured', 'idp_unavailable'], 401: ['idp_error', 'code_exchange_failed', 'id_token_invalid', 'issuer_mismatch', 'idp_email_domain_not_allowed', 'idp_email_missing', 'idp_email_unverified', 'user_suspended', 'email_not_verified', 'mfa_required', 'browser_mismatch', 'idp_link_required', 'idp_link_email_mismatch'], 403: ['signup_disabled', 'signup_domain_not_allowed'], 409: ['idp_identity_linked_elsewhere'] },
    })
    .input(callbackInput)
    .output(sessionOutput)
    .query(async ({ ctx, input }) => {
      const binding = readIdpBindingCookie(ctx.req, ctx.tenant.slug);
      const { user, tokens } = await ctx.services.idp.callback(ctx.scope, input, binding);
      return toSession(user, tokens);
    }),

  startLink: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/me/idp/link', protect: true, tags,
        summary: 'Start linking the signed-in user to their account at the identity provider',
        description: 'Needs a sign-in less than 10 minutes old (401 `reauthentication_required`). Send the browser to '
          + '`authorizationUrl`; oauth/idp/callback then links the provider account to this user (when its verified email is '
          + 'the user\'s own, else 401 `idp_link_email_mismatch`) and answers a session. This is how an account with a verified '
          + 'email gets a provider link: an email match alone never links (docs/idp.md "Linking an existing account").',
        errorResponses: {
          400: 'Not configured (`idp_not_configured`) or provider unreachable (`idp_unavailable`)',
          401: 'Not signed in, an API key (`user_token_required`), or no recent sign-in (`reauthentication_required`)',
          404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['idp_not_configured', 'idp_unavailable'], 401: ['reauthentication_required'] },
    })
    .output(z.object({ authorizationUrl: z.url() }))
    .mutation(async ({ ctx }) => ({
      authorizationUrl: await ctx.services.idp.startLink(ctx.em, ctx.tenant, { userId: ctx.principal.userId, sessionId: ctx.principal.sessionId }),
    })),

  putCredentials: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PUT', path: '/v1/{tenantSlug}/oauth/idp/credentials', protect: true, tags,
        summary: 'Set the tenant\'s identity provider: client id and secret (never returned), optional own issuer and email domains',
        description: 'Replaces the whole configuration. `issuer` (optional): the tenant\'s own OpenID provider (enterprise SSO); '
          + 'omitted, the deployment\'s `IDP_ISSUER` applies. It must be `https://` (`http://` only on a loopback host with '
          + '`IDP_ALLOW_PRIVATE_ISSUERS`), without credentials, query or fragment, and not on a private address; its OpenID '
          + 'discovery document is fetched now and must name the same issuer, else 400 and nothing is saved. '
          + '`allowedEmailDomains` (optional, at most 50): a provider sign-in whose verified email is of another domain is refused. '
          + 'Changing the issuer (to another, or back to the default) needs a signed-in Admin whose sign-in is less than 10 minutes '
          + 'old (an API key gets 403 `admin_session_required`, an older sign-in 401 `reauthentication_required`); it is audited '
          + '(`IdpOauthLinked` with `issuerChanged`) and mailed to every Admin of the tenant. '
          + 'GET tenant shows `idpRedirectUri`, the redirect URI to register at the provider.',
        errorResponses: {
          400: 'Invalid body, unusable issuer (`invalid_issuer`, `idp_issuer_not_allowed`), discovery failed (`idp_discovery_failed`, `issuer_mismatch`)',
          401: 'Not signed in, or an issuer change without a recent sign-in (`reauthentication_required`)',
          403: 'Not an admin, or an API key changing the issuer (`admin_session_required`)', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['invalid_issuer', 'idp_issuer_not_allowed', 'idp_discovery_failed', 'issuer_mismatch'], 401: ['reauthentication_required'], 403: ['admin_session_required'] },
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
      const { principal } = ctx;
      const by = principal.kind === 'user'
        ? { kind: 'user' as const, userId: principal.userId, sessionId: principal.sessionId }
        : { kind: 'api_key' as const, apiKeyId: principal.apiKeyId };
      await ctx.services.idp.putCredentials(ctx.scope, input, by);
      return OK;
    }),

  deleteCredentials: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/oauth/idp/credentials', protect: true, tags,
        summary: 'Remove the identity-provider credentials, turning the sign-in off',
        errorResponses: { 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      await ctx.services.idp.deleteCredentials(ctx.scope);
      return OK;
    }),
});
