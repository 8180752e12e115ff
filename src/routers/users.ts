import { z } from 'zod';
import { forbidden } from '../lib/errors.js';
import { adminProcedure, securityAdminProcedure } from '../middleware/auth.js';
import { USER_ROLES, USER_STATUSES, type User } from '../entities/user.js';
import { rejectEmptyQueryValues } from '../middleware/empty-query-values.js';
import { USERS_PAGE_DEFAULT_LIMIT, USERS_PAGE_MAX_LIMIT } from '../services/users/user-directory-service.js';
import { router } from '../trpc.js';
import { OK, emailOutput, okOutput, sessionListOutput, timestampOutput, toSessionList, toUserOutput, userOutput } from './schemas.js';
import { passkeyOutput } from './passkey-schemas.js';
import { roleIdsInput, roleOutput, toRoleOutput } from './roles.js';
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

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/users/{userId}', protect: true, tags,
        summary: 'Change a user\'s role, suspend / reactivate them, or set their custom data; suspending ends their sessions at once',
        description:
          'A role change applies to the user\'s existing sessions at once. The last active Admin cannot be demoted or ' +
          'suspended (409 `last_admin`); a `Pending` user becomes `Active` by verifying their address (409 `email_not_verified`). ' +
          '`customData` replaces the user\'s custom data: a JSON object of at most 4 KiB (400 `custom_data_too_large`), shown on the User ' +
          'object and as the `custom_data` claim of the OpenID Provider (scope `custom_data`); a test API key may not set it (403 `live_key_required`).',
        errorResponses: {
          400: 'Invalid body or userId, or custom data over 4 KiB (`custom_data_too_large`)', 401: 'No or invalid credential',
          403: 'Not an admin, or a test API key setting custom data (`live_key_required`)', 404: 'Unknown tenant or user',
          409: 'Last active admin (`last_admin`), or a Pending user set Active (`email_not_verified`)', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['custom_data_too_large'], 403: ['admin_required', 'live_key_required'], 404: ['not_found'], 409: ['last_admin', 'email_not_verified'] },
    })
    .input(
      z.object({
        userId: z.uuid(), role: z.enum(USER_ROLES).optional(), status: z.enum(['Active', 'Suspended']).optional(),
        customData: z.record(z.string(), z.unknown()).optional(),
      }),
    )
    .output(userOutput)
    .mutation(async ({ ctx, input }) => {
      // custom data may decide access in the tenant's own apps (plan, flags): not from a test key
      if (input.customData !== undefined && ctx.principal.kind === 'api_key' && ctx.principal.environment !== 'live') {
        throw forbidden('live_key_required', 'Changing custom data needs an Admin or a live API key (ak_live_), not a test key');
      }
      const change = { role: input.role, status: input.status, customData: input.customData };
      const user = await ctx.services.userAdministration.change(ctx.em, ctx.tenant, input.userId, change, ctx.actor, ctx.meta);
      return toUserOutput(user, ctx.tenant);
    }),

  delete: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/users/{userId}', protect: true, tags,
        summary: 'Delete (soft) a user: every session ends at once; the last active admin cannot be deleted',
        errorResponses: {
          400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user',
          409: 'Last active admin (`last_admin`)', 429: 'Rate limited',
        },
      },
      errorReasons: { 403: ['admin_required', 'live_key_required'], 404: ['not_found'], 409: ['last_admin'] },
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

  restore: securityAdminProcedure
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
      errorReasons: { 403: ['admin_required', 'live_key_required'], 404: ['not_found'], 409: ['erasure_requested_by_user', 'email_taken'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(userOutput)
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.services.userAdministration.restore(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return toUserOutput(user, ctx.tenant);
    }),

  disableTotp: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/totp/disable', tags, protect: true,
        summary: "Remove a user's TOTP factor (active and pending); idempotent",
        errorResponses: { 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required', 'live_key_required'], 404: ['not_found'] },
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

  roles: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/{userId}/roles', protect: true, tags: [...tags, 'access control'],
        summary: 'The roles a user holds (the workspace\'s own roles, docs/oidc.md "Roles and permissions"; not the built-in Admin/Member)',
        errorResponses: { 400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(z.object({ roles: z.array(roleOutput) }))
    .query(async ({ ctx, input }) => ({ roles: (await ctx.services.roleAssignments.rolesOfUser(ctx.em, ctx.tenant.id, input.userId)).map(toRoleOutput) })),

  setRoles: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PUT', path: '/v1/{tenantSlug}/users/{userId}/roles', protect: true, tags: [...tags, 'access control'],
        summary: 'Replace the roles a user holds; the next access token issued for them carries what they grant',
        errorResponses: {
          400: 'Invalid input or an unknown role (`unknown_role`)', 401: 'No or invalid credential', 403: 'Not an admin, or a test API key (`live_key_required`)',
          404: 'Unknown tenant or user', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['unknown_role'], 403: ['admin_required', 'live_key_required'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid(), roleIds: roleIdsInput }))
    .output(z.object({ roles: z.array(roleOutput) }))
    .mutation(async ({ ctx, input }) => ({
      roles: (await ctx.services.roleAssignments.setRolesOfUser(ctx.em, ctx.tenant, input.userId, input.roleIds, ctx.actor, ctx.meta)).map(toRoleOutput),
    })),
});
