import { z } from 'zod';
import { adminProcedure, securityAdminProcedure } from '../middleware/auth.js';
import { USER_ROLES, USER_STATUSES, type User } from '../entities/user.js';
import { rejectEmptyQueryValues } from '../middleware/empty-query-values.js';
import { USERS_PAGE_DEFAULT_LIMIT, USERS_PAGE_MAX_LIMIT } from '../services/users/user-directory-service.js';
import { router } from '../trpc.js';
import { OK, email, emailOutput, newPassword, okOutput, sessionListOutput, timestampOutput, toSessionList, toUserOutput, userOutput } from './schemas.js';
import { passkeyOutput } from './passkey-schemas.js';
import { asAttachment, dataProtectionTags, userExportOutput } from './user-export.js';

/** GET users/{userId}: the console's user page (docs/api-rules.md "Users and sign-up"). */
const userProfileOutput = z
  .object({
    user: userOutput,
    emailVerifiedAt: timestampOutput.nullable(),
    passkeys: z.array(passkeyOutput),
    recoveryCodesRemaining: z.number().int(),
    providerLinks: z.array(
      z.object({ issuer: z.string(), subject: z.string(), email: emailOutput.nullable(), createdAt: timestampOutput, lastLoginAt: timestampOutput.nullable() }),
    ),
  })
  .meta({ id: 'UserProfile' });

const tags = ['users'];

/** Every `/v1/{tenantSlug}/users*` procedure: the tenant's user administration (Admin or API key). */
export const usersRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users', protect: true, tags, summary: 'List the live users of the tenant, oldest first',
        description:
          '`search` (a part of the email, case-insensitive), `role` and `status` filter the list. ' +
          'Without `limit` and `cursor`, every matching live user in one answer. With either, one page: `limit` 1 to ' +
          `${USERS_PAGE_MAX_LIMIT} (default ${USERS_PAGE_DEFAULT_LIMIT}), and \`nextCursor\` to pass as \`cursor\` for the next page (null on the last).`,
        errorResponses: {
          400: 'Invalid `limit` or `cursor` (`invalid_cursor`)', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['invalid_cursor'], 403: ['admin_required'] },
    })
    .input(
      z.object({
        limit: z.coerce.number().int().min(1).max(USERS_PAGE_MAX_LIMIT).optional(),
        cursor: z.string().min(1).max(512).optional(),
        search: z.string().min(1).max(254).optional().meta({ description: 'A part of the email address, case-insensitive' }),
        role: z.enum(USER_ROLES).optional(),
        status: z.enum(USER_STATUSES).optional(),
      }),
    )
    .output(
      z.object({
        items: z.array(userOutput),
        nextCursor: z.string().nullable().optional().meta({ description: 'Only on paged answers: the next page\'s `cursor`, null on the last page' }),
      }),
    )
    .query(async ({ ctx, input }) => {
      rejectEmptyQueryValues(ctx.req, ['search']);
      const toItem = (user: User) => toUserOutput(user, ctx.tenant);
      const filter = { search: input.search, role: input.role, status: input.status };
      if (input.limit === undefined && input.cursor === undefined) {
        return { items: (await ctx.services.userDirectory.list(ctx.em, ctx.tenant.id, filter)).map(toItem) };
      }
      const page = await ctx.services.userDirectory.listPage(ctx.em, ctx.tenant.id, input.limit ?? USERS_PAGE_DEFAULT_LIMIT, input.cursor, filter);
      return { items: page.users.map(toItem), nextCursor: page.nextCursor };
    }),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users', protect: true, tags,
        summary: 'Create a user (Admin or live API key): with a password they sign in at once; without one they are mailed a link to set it',
        description:
          'The user is `Active` whatever the sign-up policy, with `role` (default `Member`). `password` must satisfy the workspace\'s ' +
          '`passwordPolicy` (400 `password_too_short` / `password_too_common`). Without it the user is mailed the password-reset link ' +
          '(valid one hour), which also verifies the address. `emailVerified: true` counts the address as verified now. ' +
          'Audited as `UserCreated`. An address a live user of the workspace has is 409 `email_taken`.',
        errorResponses: {
          400: 'Invalid body, or a password the workspace\'s policy refuses', 401: 'No or invalid credential', 403: 'Not an admin, or a test key', 404: 'Unknown tenant',
          409: 'The address belongs to a user of the workspace', 429: 'Rate limited (60 per hour per client IP)',
        },
      },
      errorReasons: { 400: ['password_too_short', 'password_too_common'], 403: ['admin_required', 'live_key_required'], 409: ['email_taken'] },
    })
    .input(
      z.object({
        email,
        role: z.enum(USER_ROLES).optional().meta({ description: 'Default `Member`' }),
        password: newPassword.optional(),
        emailVerified: z.union([z.literal(true), z.literal(false)]).optional().meta({ description: 'Count the address as verified now (default false)' }),
      }),
    )
    .output(z.object({ user: userOutput }).meta({ id: 'CreatedUser' }))
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.services.userAdministration.create(ctx.em, ctx.tenant, input, ctx.actor, ctx.meta);
      return { user: toUserOutput(user, ctx.tenant) };
    }),

  unlock: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/unlock', protect: true, tags,
        summary: 'Lift the lockout of a user\'s address: login counts its failures afresh from every client (Admin or live API key)',
        description: 'Past the workspace\'s `lockout.maxFailedAttempts`, login for the address answers 429 until `lockout.windowSeconds` end or this call. Audited as `UserUnlocked`.',
        errorResponses: { 400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin, or a test key', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required', 'live_key_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.userAdministration.unlock(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return OK;
    }),

  get: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/{userId}', protect: true, tags,
        summary: 'A live user of the tenant with their factors and provider links (Admin or API key)',
        description:
          '`user` is the User object; `emailVerifiedAt` is null until the address is verified; `passkeys` lists their passkeys, ' +
          '`recoveryCodesRemaining` their unused recovery codes, `providerLinks` their links to the workspace\'s external provider. No secret is shown.',
        errorResponses: { 400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(userProfileOutput)
    .query(async ({ ctx, input }) => {
      const profile = await ctx.services.userProfiles.profile(ctx.em, ctx.tenant.id, input.userId);
      return {
        user: toUserOutput(profile.user, ctx.tenant),
        emailVerifiedAt: profile.user.emailVerifiedAt?.toISOString() ?? null,
        passkeys: profile.passkeys,
        recoveryCodesRemaining: profile.recoveryCodesRemaining,
        providerLinks: profile.providerLinks.map((l) => ({
          ...l, createdAt: l.createdAt.toISOString(), lastLoginAt: l.lastLoginAt?.toISOString() ?? null,
        })),
      };
    }),

  update: adminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/users/{userId}', protect: true, tags,
        summary: 'Change a user\'s role or suspend / reactivate them; suspending ends their sessions at once',
        description:
          'A role change applies to the user\'s existing sessions at once. The last active Admin cannot be demoted or ' +
          'suspended (409 `last_admin`); a `Pending` user becomes `Active` by verifying their address (409 `email_not_verified`).',
        errorResponses: {
          400: 'Invalid body or userId', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user',
          409: 'Last active admin (`last_admin`), or a Pending user set Active (`email_not_verified`)', 429: 'Rate limited',
        },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'], 409: ['last_admin', 'email_not_verified'] },
    })
    .input(z.object({ userId: z.uuid(), role: z.enum(USER_ROLES).optional(), status: z.enum(['Active', 'Suspended']).optional() }))
    .output(userOutput)
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.services.userAdministration.change(ctx.em, ctx.tenant, input.userId, { role: input.role, status: input.status }, ctx.actor, ctx.meta);
      return toUserOutput(user, ctx.tenant);
    }),

  delete: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/users/{userId}', protect: true, tags,
        summary: 'Delete (soft) a user: every session ends at once; the last active admin cannot be deleted',
        errorResponses: {
          400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user',
          409: 'Last active admin (`last_admin`)', 429: 'Rate limited',
        },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'], 409: ['last_admin'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.accounts.softDelete(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return OK;
    }),

  sendPasswordReset: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/password-reset', protect: true, tags,
        summary: 'Mail a user the password-reset link (valid one hour; the admin never sees it)',
        errorResponses: { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited (60 per hour per client IP)' },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.userAdministration.sendPasswordReset(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return OK;
    }),

  sendVerificationMail: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/verification-email', protect: true, tags,
        summary: 'Mail a user whose address is not verified a new verification link',
        errorResponses: {
          401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 409: 'Already verified (`email_already_verified`)',
          429: 'Rate limited (60 per hour per client IP)',
        },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'], 409: ['email_already_verified'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.userAdministration.sendVerificationMail(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return OK;
    }),

  restore: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/restore', protect: true, tags,
        summary: 'Restore a user an admin deleted, within USER_RETENTION_DAYS; their sessions stay ended',
        description: 'A user who deleted their own account (an erasure request) is not restored (409 `erasure_requested_by_user`).',
        errorResponses: {
          401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown, live, erased or past-retention user',
          409: 'Deleted by the user, or the address belongs to a live user now', 429: 'Rate limited',
        },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'], 409: ['erasure_requested_by_user', 'email_taken'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(userOutput)
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.services.userAdministration.restore(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return toUserOutput(user, ctx.tenant);
    }),

  disableTotp: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/totp/disable', tags, protect: true,
        summary: "Remove a user's TOTP factor (active and pending); idempotent",
        errorResponses: { 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.string().min(1) }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.totp.disable(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return OK;
    }),

  exportUser: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/{userId}/export', tags: dataProtectionTags, protect: true,
        summary: 'Download everything held about a user of the tenant as JSON (admin; soft-deleted users included until erased)',
        errorResponses: { 400: 'Invalid user id', 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(userExportOutput)
    .query(async ({ ctx, input }) => {
      const data = await ctx.services.dataExport.exportUser(ctx.em, ctx.tenant, input.userId, 'admin', ctx.actor, ctx.meta);
      return asAttachment(ctx.res, data);
    }),

  listSessions: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/{userId}/sessions', protect: true, tags,
        summary: "A user's live sessions, newest first (Admin or API key)",
        description: '`current` is true for the session of the calling admin\'s own token when the user is the caller.',
        errorResponses: { 400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(sessionListOutput)
    .query(async ({ ctx, input }) => {
      const sessions = await ctx.services.sessions.listLiveOfLiveUser(ctx.em, ctx.tenant.id, input.userId);
      return toSessionList(sessions, ctx.principal.kind === 'user' ? ctx.principal.sessionId : null);
    }),

  revokeSession: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/users/{userId}/sessions/{sessionId}', protect: true, tags,
        summary: "End one of a user's sessions (Admin or API key); its tokens fail at once",
        errorResponses: {
          400: 'userId or sessionId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant, user or session', 429: 'Rate limited',
        },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid(), sessionId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.sessions.revokeOwnedSession(ctx.em, ctx.tenant.id, input.userId, input.sessionId, 'session_revoked_by_admin', ctx.actor, ctx.meta);
      return OK;
    }),
});
