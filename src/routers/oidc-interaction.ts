import { z } from 'zod';
import { LOCALES } from '../lib/locales.js';
import { authenticatedProcedure, tenantProcedure } from '../middleware/pipeline.js';
import { readSessionBindingCookie } from '../middleware/refresh-cookie.js';
import { OIDC_PROVIDER_PER_IP } from '../services/rate-limits/rate-limit-rules.js';
import { router } from '../trpc.js';
import { opaqueToken } from './schemas.js';

const tags = ['openid provider'];

/**
 * Largest body of `complete` (a refresh token and an organization id), in bytes: far less than the
 * common limit; src/rest/app.ts parses that route's body with it.
 */
export const INTERACTION_COMPLETE_MAX_BODY_BYTES = 4 * 1024;

/** The `{uid}` path parameter: the provider's interaction id (a nanoid; anything else is simply not found). */
const interactionInput = z.object({
  uid: z.string().min(1).max(200).meta({ description: 'The interaction id the provider put in the hand-off URL (`/app/{slug}/sign-in?interaction={uid}`)' }),
});

/**
 * The hand-off between a workspace's OpenID Provider and its hosted sign-in page (docs/oidc.md
 * "Sign-in"), under the provider's issuer `/v1/{tenantSlug}/oidc`: the page reads the pending sign-in
 * (`details`) and finishes it with the session it holds (`complete`). Both read the provider's
 * interaction cookie (`_interaction`, scoped to `/v1/{tenantSlug}/oidc/interaction/{uid}`), so only
 * the browser that started the sign-in can finish it (on /trpc, which that cookie never reaches,
 * they answer 401 `interaction_not_found`); the OpenID router (src/rest/oidc-routes.ts) passes these
 * two routes on to the REST façade with the provider's CSP. Per-IP budget: the provider's
 * (`OIDC_PROVIDER_PER_IP`, src/services/rate-limits/rate-limit-rules.ts), each route its own; finishing also
 * spends the session's per-credential one.
 */
export const oidcInteractionRouter = router({
  details: tenantProcedure
    .meta({
      rateLimit: { ip: OIDC_PROVIDER_PER_IP },
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/oidc/interaction/{uid}/details', protect: false, tags,
        summary: 'The pending sign-in of an application: its name, whether it asked for a new sign-in, a language, an organization',
        description:
          'For the hosted sign-in page: needs the provider\'s interaction cookie of the browser that started the sign-in ' +
          '(otherwise 401 `interaction_not_found`).',
        errorResponses: { 401: 'Unknown or expired interaction, or another browser\'s', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 401: ['interaction_not_found'] },
    })
    .input(interactionInput)
    .output(
      z.object({
        clientName: z.string().meta({ description: 'The application\'s name (its client id when it has none)' }),
        freshSignInRequired: z.boolean().meta({ description: 'The application asked for a new sign-in (`prompt=login` or `max_age`)' }),
        notBefore: z.number().int().meta({ description: 'The earliest sign-in time it accepts, seconds since the epoch (0 when none)' }),
        uiLocale: z.enum(LOCALES).nullable().meta({ description: 'The first language of its `ui_locales` the pages speak, or null' }),
        organizationsRequested: z.boolean().meta({ description: 'It asked for scope `organizations`: a person in several picks one' }),
        organizationId: z.string().nullable().meta({ description: 'The organization it named (`organization_id`), or null' }),
      }),
    )
    .query(({ ctx }) => ctx.services.oidc.interactionInfo(ctx.tenant, ctx.req, ctx.res)),

  // Any credential reaches the service, which refuses an API key with its own words (401
  // `user_token_required`: finishing a sign-in needs the person's session).
  complete: authenticatedProcedure
    .meta({
      rateLimit: { ip: OIDC_PROVIDER_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/oidc/interaction/{uid}/complete', protect: true, tags,
        summary: 'Finish an application\'s sign-in with the person\'s hosted session; answers where the browser goes next',
        description:
          'Needs the session\'s access token (an API key gets 401 `user_token_required`), the provider\'s interaction cookie of the browser ' +
          'that started the sign-in, and proof of holding the session: the `session_binding_{tenantSlug}` cookie the hosted pages\' sign-in sets, ' +
          'or the session\'s current `refreshToken` in the body (otherwise 401 `session_proof_required`). `organizationId`: the organization ' +
          'the person picked when the application asked for scope `organizations` (docs/oidc.md "Organization picker").',
        errorResponses: {
          400: 'Invalid body, or an organization the application did not ask for or did not name',
          401: 'No valid credential, an API key, no session proof, an unknown interaction, or a sign-in older than the application accepts',
          403: 'Not a member of the organization',
          404: 'Unknown tenant',
          409: 'Several organizations: pick one',
          413: `The body is larger than ${INTERACTION_COMPLETE_MAX_BODY_BYTES} bytes`,
          429: 'Rate limited',
        },
      },
      errorReasons: {
        400: ['organizations_not_requested', 'organization_mismatch'],
        401: ['user_token_required', 'session_proof_required', 'interaction_not_found', 'fresh_sign_in_required'],
        403: ['organization_membership_required'],
        409: ['organization_selection_required'],
      },
    })
    .input(
      interactionInput.extend({
        refreshToken: opaqueToken.optional().meta({ description: 'The session\'s current refresh token: the session proof of a client without the binding cookie' }),
        organizationId: z.uuid({ error: 'Must be an organization id' }).optional().meta({ description: 'The organization the person picked' }),
      }),
    )
    .output(z.object({ redirectTo: z.string().meta({ description: 'Where the browser goes next: the provider\'s resume endpoint' }) }))
    .mutation(async ({ ctx, input }) => {
      const proof = { bindingCookie: readSessionBindingCookie(ctx.req, ctx.tenant.slug), refreshToken: input.refreshToken };
      const redirectTo = await ctx.services.oidc.finishSignIn(ctx.em, ctx.tenant, ctx.principal, proof, ctx.req, ctx.res, ctx.meta, input.organizationId);
      return { redirectTo };
    }),
});
