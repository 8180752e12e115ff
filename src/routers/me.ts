import { userProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { profileName, profilePicture } from '../lib/profile.js';
import { withAccountBudget } from '../middleware/rate-limit.js';
import { router } from '../trpc.js';
import { PASSKEY_REASONS } from '../errors/passkey.js';
import { isTotpEnrolled } from '../services/mfa/totp-service.js';
import { USER_REASONS } from '../errors/user.js';
import { myOrganizationOutput } from './organization-schemas.js';
import { passkeyOutput } from './passkey-schemas.js';
import { email, newPassword, OK, okOutput, opaqueToken, presentedPassword, sessionListOutput, toSessionList, toUserOutput, userOutput } from './schemas.js';
import { asAttachment, dataProtectionTags, userExportOutput } from './user-export.js';
import { SELF_SERVICE_MAIL_PER_IP } from '../services/rate-limits/rate-limit-rules.js';

const tags = ['me'];
const accountTags = ['account'];

/** GET me: the `User` schema plus the count of unused recovery codes. */
const meOutput = userOutput.extend({
  recoveryCodesRemaining: z.number().int().min(0).meta({
    description:
      'Unused TOTP recovery codes left (docs/mfa.md "Recovery codes"); 0 when TOTP is not enrolled (codes exist only while it is; `totpEnrolled` tells the two apart)',
  }),
  passwordSet: z.boolean().meta({
    description: 'Whether the account has a password (false for one created through the identity provider); POST me/email asks for it when true',
  }),
});

/** Every `/v1/{tenantSlug}/me*` procedure: the signed-in user's own account. */
export const meRouter = router({
  get: userProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/me', tags, protect: true, summary: 'The signed-in user',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant' },
      },
    })
    .output(meOutput)
    .query(async ({ ctx }) => {
      const user = ctx.sessionUser ?? (await ctx.services.accounts.getUser(ctx.em, ctx.tenant.id, ctx.principal.userId));
      // A second query only for TOTP users, so the hot path of everyone else stays one query: recovery
      // codes exist only while TOTP is enrolled (removing the factor deletes them), so without it the count is 0.
      const recoveryCodesRemaining = isTotpEnrolled(user) ? await ctx.services.recoveryCodes.remaining(ctx.em, ctx.tenant.id, user.id) : 0;
      return { ...toUserOutput(user, ctx.tenant), recoveryCodesRemaining, passwordSet: user.passwordHash !== null };
    }),

  update: userProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/me', tags, protect: true,
        summary: 'Edit the signed-in user\'s profile: display name and picture',
        description:
          '`name`: 1 to 128 characters (surrounding spaces removed, no control characters); `picture`: an `https://` URL of a host name, at most ' +
          '2048 characters (`http:`, `data:`, `javascript:`, an IP address or a user name in the URL are refused). `null` clears a field, an absent ' +
          'field stays as it is. They are the `name` and `picture` claims of the workspace\'s OpenID Provider (scope `profile`). Audited ' +
          '`UserProfileUpdated` (`details.changed`: the fields that changed, never their values); nothing when nothing changed.',
        errorResponses: { 400: 'Invalid body (`validation_failed`)', 401: 'Not signed in', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ name: profileName.nullable().optional(), picture: profilePicture.nullable().optional() }))
    .output(userOutput)
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.services.accounts.updateOwnProfile(ctx.scope, ctx.principal.userId, { name: input.name, picture: input.picture });
      return toUserOutput(user, ctx.tenant);
    }),

  listSessions: userProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/me/sessions', tags, protect: true,
        summary: 'The live sessions of the signed-in user, newest first; `current` marks this token\'s',
        description: '`lastUsedAt` is the last refresh (or the start): authenticated requests do not update it.',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(sessionListOutput)
    .query(async ({ ctx }) => {
      const sessions = await ctx.services.sessions.listLive(ctx.em, ctx.tenant.id, ctx.principal.userId);
      return toSessionList(sessions, ctx.principal.sessionId);
    }),

  organizations: userProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/me/organizations', tags, protect: true,
        summary: 'The organizations the signed-in user belongs to, by name, with their organization roles there',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(z.object({ items: z.array(myOrganizationOutput) }))
    .query(async ({ ctx }) => ({ items: await ctx.services.organizationMembers.organizationsOf(ctx.em, ctx.tenant.id, ctx.principal.userId) })),

  acceptInvite: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/me/invites/accept', tags, protect: true,
        summary: 'Accept an invitation into an organization sent to the signed-in user\'s address: they become a member with its roles',
        description: 'For a person who has an account already; a new person accepts with `POST /v1/invites/accept` and a password. The workspace role does not change.',
        errorResponses: {
          400: 'Invalid body', 401: 'Not signed in; unknown, used, revoked or another workspace\'s invitation, or one without an organization (`invite_invalid`); expired (`invite_expired`)',
          403: 'The invitation was sent to another address (`invite_email_mismatch`)', 404: 'Unknown tenant',
          409: 'A member of the organization already (`already_member`)', 429: 'Rate limited',
        },
      },
      errorReasons: { 401: ['invite_invalid', 'invite_expired'], 403: ['invite_email_mismatch'], 409: ['already_member'] },
    })
    .input(z.object({ token: opaqueToken }))
    .output(z.object({ organizationId: z.string() }))
    .mutation(async ({ ctx, input }) => ({
      organizationId: await ctx.services.invites.acceptSignedIn(ctx.scope, ctx.principal.userId, input.token),
    })),

  revokeSession: userProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/me/sessions/{sessionId}', tags, protect: true,
        summary: 'End one session of the signed-in user ("sign out this device"); its tokens fail at once',
        description: 'Ending the current session works like logout. An id that is not a live session of this user answers 404.',
        errorResponses: { 400: 'sessionId is not a UUID', 401: 'Not signed in', 404: 'Unknown tenant or session', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ sessionId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.sessions.revokeOwnedSession(ctx.scope, ctx.principal.userId, input.sessionId, 'session_revoked_by_user');
      return OK;
    }),

  delete: userProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/me', tags, protect: true,
        summary: 'Delete (soft) the signed-in user; every session ends',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant', 409: 'Last admin' },
      },
      errorReasons: { 409: ['last_admin'] },
    })
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      await ctx.services.accounts.softDelete(ctx.scope, ctx.principal.userId);
      return OK;
    }),

  changePassword: userProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/me/password', tags, protect: true,
        summary: 'Change the password; the other sessions and open reset links of the user end',
        description: 'Wrong current passwords count against the same per-account budget as login (429 with Retry-After) and are audited.',
        errorResponses: {
          400: 'Invalid body, or a new password the workspace\'s policy refuses', 401: 'Not signed in or wrong current password', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['password_too_short', 'password_too_common'], 401: ['invalid_credentials'] },
    })
    .input(z.object({ currentPassword: presentedPassword, newPassword }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      const { tenant, principal } = ctx;
      const user = await ctx.services.accounts.getUser(ctx.em, tenant.id, principal.userId);
      await withAccountBudget(ctx, tenant, user.email, () =>
        ctx.services.accounts.changePassword(ctx.scope, user, principal.sessionId, input.currentPassword, input.newPassword),
      );
      return OK;
    }),

  requestEmailChange: userProcedure
    .meta({
      // the password check runs in login's account budget (withAccountBudget)
      rateLimit: { ip: SELF_SERVICE_MAIL_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/me/email', tags: accountTags, protect: true,
        summary: 'Ask to change the sign-in email: a confirmation link is mailed to the new address',
        description:
          'Needs a sign-in less than 10 minutes old (401 `reauthentication_required`) and, when the account has a password, ' +
          '`currentPassword` (401 `invalid_credentials` when missing or wrong; it counts against login\'s per-account budget and is audited). ' +
          'The address changes only when the link (valid 24 hours, single use; a new request replaces it) is confirmed with ' +
          'POST auth/email-change/confirm; the old address is then told. Audited `UserEmailChangeRequested`.',
        errorResponses: {
          400: 'Invalid body, or the address is already the account\'s (`email_unchanged`)',
          401: 'Not signed in, `reauthentication_required`, or a wrong current password',
          403: 'The workspace admits only some email domains (`signup_domain_not_allowed`)',
          404: 'Unknown tenant', 409: 'Another user of the workspace has this address', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: [USER_REASONS.emailUnchanged], 401: ['reauthentication_required', 'invalid_credentials'], 403: ['signup_domain_not_allowed'], 409: ['email_taken'] },
    })
    .input(z.object({ newEmail: email, currentPassword: presentedPassword.optional() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      const { tenant, principal } = ctx;
      const user = await ctx.services.accounts.getUser(ctx.em, tenant.id, principal.userId);
      await withAccountBudget(ctx, tenant, user.email, () =>
        ctx.services.emailChange.request(ctx.scope, principal, input.newEmail, input.currentPassword),
      );
      return OK;
    }),

  exportMe: userProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/me/export', tags: dataProtectionTags, protect: true,
        summary: 'Download everything held about the signed-in user as JSON (GDPR art. 15/20)',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(userExportOutput)
    .query(async ({ ctx }) => {
      const data = await ctx.services.dataExport.exportUser(ctx.scope, ctx.principal.userId, 'self');
      return asAttachment(ctx.res, data);
    }),

  passkeys: userProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/me/passkeys', tags, protect: true, summary: 'The signed-in user\'s passkeys',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant' },
      },
    })
    .output(z.object({ items: z.array(passkeyOutput) }))
    .query(async ({ ctx }) => ({ items: await ctx.services.passkeys.list(ctx.em, ctx.tenant, ctx.principal.userId) })),

  deletePasskey: userProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/me/passkeys/{id}', tags, protect: true,
        summary: 'Delete one of the signed-in user\'s passkeys; it signs in no more',
        description: 'Needs a recent sign-in like mfa/totp/enroll (else 401 `reauthentication_required`). The user is mailed a notice.',
        errorResponses: { 401: 'Not signed in, or `reauthentication_required`', 404: 'Unknown tenant or passkey' },
      },
      errorReasons: { 401: ['reauthentication_required'], 404: [PASSKEY_REASONS.passkeyNotFound] },
    })
    .input(z.object({ id: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.passkeys.remove(ctx.scope, ctx.principal, input.id);
      return OK;
    }),
});
