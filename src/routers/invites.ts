import { adminProcedure, publicProcedure, requireLiveCredential } from '../middleware/pipeline.js';
import { z } from 'zod';
import { INVITE_STATUSES, type Invite } from '../entities/invite.js';
import { USER_ROLES } from '../entities/user.js';
import type { Principal } from '../services/sessions/bearer-authentication-service.js';
import type { UserRole } from '../entities/user.js';
import { withRetryAfter } from '../middleware/rate-limit.js';
import { INVITE_DEFAULT_TTL_SECONDS, INVITE_MAX_TTL_SECONDS, INVITE_MIN_TTL_SECONDS } from '../services/invites/invite-service.js';
import { router } from '../trpc.js';
import { organizationRoleName } from './organization-schemas.js';
import { deliverSession } from './session-delivery.js';
import { email, newPassword, OK, okOutput, opaqueToken, queryBoolean, tenantSessionOutput, timestampOutput, toSession, emailOutput } from './schemas.js';
import { ACCOUNT_CREATION_PER_IP } from '../services/rate-limits/rate-limit-rules.js';
import { SESSION_REASONS } from '../errors/session.js';
import { INVITE_REASONS } from '../errors/invite.js';
import { inviteRequestHeaders, inviteResendRequestHeaders, readIdempotencyKey } from './idempotency-key.js';

const tags = ['invites'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or invite' };

/** An invite as the API shows it (docs/api-rules.md "Resources"). */
/**
 * An invite for an Admin, or into an organization (a membership grants organization permissions),
 * grants access: an `ak_test_` key may invite Members only (docs/security.md "Test keys").
 */
function mayGrantRole(principal: Principal): (role: UserRole, organizationId?: string) => void {
  return (role, organizationId) => {
    if (role === 'Admin' || organizationId) requireLiveCredential(principal);
  };
}

export const inviteOutput = z
  .object({
    id: z.string(),
    email: emailOutput,
    role: z.enum(USER_ROLES),
    status: z.enum(INVITE_STATUSES),
    expiresAt: timestampOutput,
    createdAt: timestampOutput,
    invitedBy: z.string().nullable().meta({ description: 'Id of the user or API key that created the invite' }),
    organizationId: z.string().optional().meta({ description: 'Only on an invitation into an organization: accepting it makes the person a member' }),
    organizationRoles: z.array(z.string()).optional().meta({ description: 'Only with `organizationId`: the organization roles the membership gets' }),
  })
  .meta({ id: 'Invite' });

function toInviteOutput(invite: Invite): z.infer<typeof inviteOutput> {
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role,
    status: invite.status,
    expiresAt: invite.expiresAt.toISOString(),
    createdAt: invite.createdAt.toISOString(),
    invitedBy: invite.invitedBy,
    ...(invite.organizationId ? { organizationId: invite.organizationId, organizationRoles: invite.organizationRoles } : {}),
  };
}

export const invitesRouter = router({
  accept: publicProcedure
    .meta({
      rateLimit: { ip: ACCOUNT_CREATION_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/invites/accept', protect: false, tags,
        summary: 'Accept an invite with a new password: creates the user and signs them in',
        errorResponses: {
          400: 'Invalid body', 401: 'Unknown, revoked, used (`invite_invalid`) or expired (`invite_expired`) token',
          409: 'The email already belongs to a user of the tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['password_too_short', 'password_too_common'], 401: ['invite_invalid', 'invite_expired'], 409: ['email_taken'] },
    })
    .input(z.object({ token: opaqueToken, password: newPassword }))
    .output(tenantSessionOutput)
    .mutation(async ({ ctx, input }) => {
      const { tenant, user, tokens } = await ctx.services.invites.accept(ctx.em, input.token, input.password, ctx.meta);
      return deliverSession(ctx, tenant.slug, { ...toSession(user, tokens), tenantSlug: tenant.slug }, tokens.sessionId);
    }),

  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/invites', protect: true, tags,
        summary: 'List invites, newest first (open and expired; accepted and revoked on request)',
        errorResponses: { ...adminErrors, 400: 'Invalid query', 429: 'Rate limited' },
      },
    })
    .input(z.object({ includeAccepted: queryBoolean.optional(), includeRevoked: queryBoolean.optional() }))
    .output(z.object({ items: z.array(inviteOutput) }))
    .query(async ({ ctx, input }) => {
      const invites = await ctx.services.invites.list(
        ctx.scope, { includeAccepted: input.includeAccepted ?? false, includeRevoked: input.includeRevoked ?? false },
      );
      return { items: invites.map(toInviteOutput) };
    }),

  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/invites', protect: true, tags,
        summary: 'Invite an email address; the accept link is mailed and the token returned once',
        description:
          'At most `INVITES_PER_TENANT_PER_DAY` (default 100) invites per tenant in any 24 hours; beyond that 429 with Retry-After. ' +
          'Send an `Idempotency-Key` (one per logical invitation, the same on every retry of it): a retry whose answer was lost ' +
          'gets the same invite and token again within 24 hours instead of a second invite and mail.',
        requestHeaders: inviteRequestHeaders,
        errorResponses: {
          ...adminErrors, 400: 'Invalid body or Idempotency-Key, or an unknown organization role (`unknown_organization_role`)',
          403: 'Not an admin, or a test API key inviting an Admin or into an organization (`live_key_required`)',
          404: 'Unknown tenant or organization',
          409: 'The email already belongs to a user of the tenant, or the Idempotency-Key was used for a different request',
          429: 'Rate limited, or the daily invite limit of the tenant is spent',
        },
      },
      errorReasons: {
        400: ['unknown_organization_role', SESSION_REASONS.invalidIdempotencyKey], 403: ['live_key_required'], 404: ['not_found'],
        409: ['email_taken', INVITE_REASONS.idempotencyKeyReused],
      },
    })
    .input(
      z.object({
        email,
        role: z.enum(USER_ROLES).optional().meta({ description: 'Default `Member`' }),
        ttlSeconds: z
          .number()
          .int()
          .min(INVITE_MIN_TTL_SECONDS)
          .max(INVITE_MAX_TTL_SECONDS)
          .optional()
          .meta({ description: `Lifetime in seconds, ${INVITE_MIN_TTL_SECONDS} to ${INVITE_MAX_TTL_SECONDS}; default ${INVITE_DEFAULT_TTL_SECONDS}` }),
        organizationId: z.uuid().optional().meta({ description: 'Accepting the invite makes the person a member of this organization (docs/organizations.md)' }),
        organizationRoles: z.array(organizationRoleName).max(50).optional().meta({ description: 'Names of the organization roles the membership gets; needs `organizationId`' }),
      }),
    )
    .output(z.object({ token: z.string(), invite: inviteOutput }))
    .mutation(async ({ ctx, input }) => {
      const idempotencyKey = readIdempotencyKey(ctx.req);
      const { invite, token } = await withRetryAfter(
        ctx.res, () => ctx.services.invites.create(ctx.scope, input, mayGrantRole(ctx.principal), idempotencyKey),
      );
      return { token, invite: toInviteOutput(invite) };
    }),

  resend: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/invites/{id}/resend', protect: true, tags,
        summary: 'Send an open or expired invite again: a new token and link are mailed, the old token stops working',
        description:
          'Creates a new invite to the same email with the same role and the default lifetime (the old one is revoked as ' +
          '`superseded`); counts against `INVITES_PER_TENANT_PER_DAY` like any invite. ' +
          'Send an `Idempotency-Key` (one per logical resend, the same on every retry of it): a retry whose answer was lost ' +
          'gets the same new invite and token again within 24 hours instead of 409 `invite_not_open`.',
        requestHeaders: inviteResendRequestHeaders,
        errorResponses: {
          ...adminErrors, 400: 'The request is malformed, or the Idempotency-Key is not 1 to 255 visible ASCII characters',
          409: 'The invite was accepted or revoked, the email now belongs to a user, or the Idempotency-Key was used for a different request',
          429: 'Rate limited, or the daily invite limit is spent',
        },
      },
      errorReasons: {
        400: [SESSION_REASONS.invalidIdempotencyKey], 403: ['live_key_required'], 404: ['not_found'],
        409: ['invite_not_open', 'email_taken', INVITE_REASONS.idempotencyKeyReused],
      },
    })
    .input(z.object({ id: z.string().min(1).max(200) }))
    .output(z.object({ token: z.string(), invite: inviteOutput }))
    .mutation(async ({ ctx, input }) => {
      const idempotencyKey = readIdempotencyKey(ctx.req);
      const { invite, token } = await withRetryAfter(
        ctx.res, () => ctx.services.invites.resend(ctx.scope, input.id, mayGrantRole(ctx.principal), idempotencyKey),
      );
      return { token, invite: toInviteOutput(invite) };
    }),

  revoke: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/invites/{id}', protect: true, tags,
        summary: 'Revoke an open invite; its token stops working',
        errorResponses: { ...adminErrors, 409: 'The invite was accepted or has expired', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'], 409: ['invite_not_open'] },
    })
    .input(z.object({ id: z.string().min(1).max(200) }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.invites.revoke(ctx.scope, input.id);
      return OK;
    }),
});
