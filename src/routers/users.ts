import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { profileName, profilePicture } from '../lib/profile.js';
import { REQUEST_ERRORS } from '../lib/errors.js';
import { responseSink } from '../lib/response-sink.js';
import { FOREIGN_ALGORITHMS } from '../security/foreign-passwords.js';
import { IMPORT_MAX_USERS, IMPORT_USER_REASONS } from '../services/users/user-import-service.js';
import { IMPORT_JOB_MAX_LINE_BYTES, IMPORT_JOB_MAX_LINES, type ImportJobView } from '../services/users/user-import-job-service.js';
import { USER_IMPORT_JOB_STATUSES } from '../entities/user-import.js';
import { USER_ROLES, USER_STATUSES, type User } from '../entities/user.js';
import { rejectEmptyQueryValues } from '../middleware/empty-query-values.js';
import { USERS_PAGE_DEFAULT_LIMIT, USERS_PAGE_MAX_LIMIT } from '../services/users/user-directory-service.js';
import { router } from '../trpc.js';
import { OK, email, emailOutput, newPassword, okOutput, sessionListOutput, timestampOutput, toSessionList, toUserOutput, userOutput } from './schemas.js';
import { passkeyOutput } from './passkey-schemas.js';
import { roleIdsInput, roleOutput, toRoleOutput } from './roles.js';
import { asAttachment, dataProtectionTags, userExportOutput } from './user-export.js';
import { SESSION_ERRORS } from '../errors/session.js';
import { ADMIN_USER_MAIL_PER_IP } from '../services/rate-limits/rate-limit-rules.js';

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

/** One user of POST users/import (docs/import.md); each field's content is checked per user. */
const importUserInput = z.object({
  email: z.string().max(320).meta({ description: 'The address; an invalid one is an error for this user (`invalid_email`)' }),
  emailVerified: z.boolean().optional().meta({ description: 'True: the address counts as verified and the user is `Active`' }),
  role: z.enum(USER_ROLES).optional().meta({ description: 'Default `Member`' }),
  password: z
    .object({
      algorithm: z.string().max(32).meta({ description: `One of ${FOREIGN_ALGORITHMS.map((a) => `\`${a}\``).join(', ')}` }),
      hash: z.string().max(1024),
    })
    .catchall(z.union([z.string().max(1024), z.number()]))
    .optional()
    .meta({
      description:
        'The hash from the old system and its parameters: `argon2` (PHC string), `bcrypt` (`$2a$`/`$2b$`/`$2y$`), `scrypt` (`hash`, `salt`, `N`, `r`, `p`; base64), ' +
        '`firebase-scrypt` (`hash`, `salt`, and the project\'s `signerKey`, `saltSeparator`, `rounds`, `memCost`), `pbkdf2` (`pbkdf2_sha256$iterations$salt$hash` as ' +
        'Django writes it, or `hash`, `salt` (base64), `iterations`, `digest` sha1|sha256|sha512). Verified at the next sign-in, then replaced by argon2id. ' +
        'A malformed one is an error for this user (`unsupported_algorithm`, `malformed_hash`).',
    }),
  totpSecret: z.string().max(256).optional().meta({ description: 'The user\'s TOTP secret (RFC 6238), base32, so their authenticator keeps working' }),
  customData: z.record(z.string(), z.unknown()).optional().meta({
    description: 'The user\'s custom data, a JSON object of at most 4 KiB (larger: `invalid_custom_data` for this user)',
  }),
  createdAt: z.string().max(64).optional().meta({
    description: 'When the account was created in the old system (ISO 8601); kept as the user\'s `createdAt`. Unparseable or in the future: `invalid_created_at`',
  }),
  providerLinks: z
    .array(z.object({ issuer: z.string().max(512), subject: z.string().max(255) }))
    .max(10)
    .optional()
    .meta({
      description:
        'The user\'s accounts at external OpenID providers (issuer URL and `sub`), so signing in with that provider finds them again. A malformed one: ' +
        '`invalid_provider_link`; one another user of the workspace already holds (or earlier in the request): `provider_link_taken`',
    }),
  name: z.string().max(1024).nullable().optional().meta({
    description: 'The display name, 1 to 128 characters as PATCH me takes it (else `invalid_name` for this user); null or absent: none',
  }),
  picture: z.string().max(4096).nullable().optional().meta({
    description: 'An https:// URL of the person\'s picture, at most 2048 characters as PATCH me takes it (else `invalid_picture` for this user); null or absent: none',
  }),
});

/** The answer of POST users/import. */
const importOutput = z
  .object({
    created: z.number().int(),
    skipped: z.number().int().meta({ description: 'Addresses already in the workspace (or earlier in the request): never overwritten' }),
    errors: z.array(z.object({ index: z.number().int().meta({ description: 'Position in `users`, from 0' }), reason: z.enum(IMPORT_USER_REASONS) })),
  })
  .meta({ id: 'UserImportResult' });

/** Every `/v1/{tenantSlug}/users*` procedure: the tenant's user administration (Admin or API key). */
/** An import job as POST and GET users/import-jobs show it. */
const importJobOutput = z
  .object({
    id: z.string(),
    status: z.enum(USER_IMPORT_JOB_STATUSES).meta({ description: '`Queued` once the body is in, `Running` while chunks are imported, then `Completed` (or `Failed`)' }),
    total: z.number().int().meta({ description: 'Lines received (empty lines are not counted)' }),
    processed: z.number().int(),
    created: z.number().int(),
    skipped: z.number().int(),
    failed: z.number().int().meta({ description: 'Lines in the failure report (GET users/import-jobs/{id}/errors)' }),
    createdAt: timestampOutput,
    finishedAt: timestampOutput.nullable(),
  })
  .meta({ id: 'UserImportJob' });

function toImportJobOutput(job: ImportJobView): z.infer<typeof importJobOutput> {
  return { ...job, createdAt: job.createdAt.toISOString(), finishedAt: job.finishedAt?.toISOString() ?? null };
}

/** Marked by the REST app (rest/app.ts) when an import job's NDJSON body is left unread for the procedure to stream. */
export const STREAMED_BODY_LOCAL = 'streamedNdjsonBody';

export const usersRouter = router({
  createImportJob: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/import-jobs', protect: true, tags,
        summary: `Import a large file of users (NDJSON, up to ${IMPORT_JOB_MAX_LINES.toLocaleString('en')} lines) as a background job`,
        description:
          'The body is `application/x-ndjson`: one user a line, each as an item of POST users/import (empty lines ignored; a line at most ' +
          `${IMPORT_JOB_MAX_LINE_BYTES} bytes). It is streamed into the job as it arrives, never held whole; the answer comes once it is all in. ` +
          'The job then runs on the job queue in chunks of 1,000 and survives a restart; follow it with GET users/import-jobs/{id}. One ' +
          '`UsersImported` audit event (`via` `job`) when it completes. Only on the REST API, not on /trpc.',
        errorResponses: {
          400: 'Not NDJSON (`unsupported_media_type`), no line (`import_empty`), a line too long (`import_line_too_long`)', 401: 'No or invalid credential',
          403: 'Not an admin, or a test key', 404: 'Unknown tenant', 413: 'More lines than a job takes (`import_too_many_lines`)', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['unsupported_media_type', 'import_empty', 'import_line_too_long'], 413: ['import_too_many_lines'] },
    })
    .input(z.looseObject({}))
    .output(z.object({ job: importJobOutput }))
    .mutation(async ({ ctx }) => {
      if (ctx.res.locals[STREAMED_BODY_LOCAL] !== true) {
        throw REQUEST_ERRORS.ndjsonRequired();
      }
      const job = await ctx.services.userImportJobs.receive(ctx.scope, ctx.req);
      return { job: toImportJobOutput(job) };
    }),

  getImportJob: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/import-jobs/{id}', protect: true, tags,
        summary: 'An import job\'s status and progress counters',
        errorResponses: { 400: 'id is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or job', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ id: z.uuid() }))
    .output(z.object({ job: importJobOutput }))
    .query(async ({ ctx, input }) => ({ job: toImportJobOutput(await ctx.services.userImportJobs.get(ctx.em, ctx.tenant.id, input.id)) })),

  importJobErrors: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/import-jobs/{id}/errors', protect: true, tags,
        summary: 'An import job\'s failure report as NDJSON: one `{index, reason}` a line (streamed)',
        description:
          '`index` is the line\'s position among the file\'s non-empty lines, from 0; `reason` one of the per-user reasons of POST users/import, ' +
          'or `invalid_json`. Only on the REST API, not on /trpc.',
        errorResponses: { 400: 'id is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or job', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ id: z.uuid() }))
    .output(z.null())
    .query(async ({ ctx, input }) => {
      if (ctx.req.originalUrl.startsWith('/trpc')) throw REQUEST_ERRORS.restOnly({ resource: 'failure report' });
      await ctx.services.userImportJobs.get(ctx.em, ctx.tenant.id, input.id);
      ctx.res.status(200);
      ctx.res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
      ctx.res.setHeader('Content-Disposition', `attachment; filename="import-errors-${input.id}.ndjson"`);
      try {
        await ctx.services.userImportJobs.writeErrors(ctx.em, ctx.tenant.id, input.id, responseSink(ctx.res));
        ctx.res.end();
      } catch (err) {
        if (ctx.res.headersSent) ctx.res.destroy();
        throw err;
      }
      return null;
    }),

  import: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/import', protect: true, tags,
        summary: `Import up to ${IMPORT_MAX_USERS} users with their existing password hashes (Admin or live API key)`,
        description:
          'Users moving in from another system (docs/import.md). An address already in the workspace is skipped, never overwritten; a user whose ' +
          'address, password hash or TOTP secret is malformed is reported in `errors` by index and the others are still created. Imported users ' +
          'sign in with their old password, which is then rehashed with argon2id and the old hash deleted. One `UsersImported` audit event with ' +
          'the counts. The body may be up to 2 MiB on the REST API.',
        errorResponses: {
          400: 'Invalid body (more than 1,000 users, a field of the wrong type)', 401: 'No or invalid credential', 403: 'Not an admin, or a test key',
          404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
    })
    .input(z.object({ users: z.array(importUserInput).min(1).max(IMPORT_MAX_USERS) }))
    .output(importOutput)
    .mutation(async ({ ctx, input }) => ctx.services.userImport.importUsers(ctx.scope, input.users)),

  export: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/export', protect: true, tags,
        summary: 'Download every live user of the workspace as NDJSON, oldest first (streamed; no password hashes, no secrets)',
        description:
          'One JSON object a line: `id`, `email`, `emailVerified`, `role`, `status`, `createdAt`, `lastLoginAt`, `totpEnrolled`, `locale`, `importedAt` ' +
          '(null unless an import created the user), `customData`, `providerLinks`, `name`, `picture` (null when not set). Its lines are valid `users` of POST users/import (without passwords). Only on the REST API, not on /trpc.',
        errorResponses: { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.looseObject({}))
    .output(z.null())
    .query(async ({ ctx }) => {
      if (ctx.req.originalUrl.startsWith('/trpc')) throw REQUEST_ERRORS.restOnly({ resource: 'export' });
      const day = new Date().toISOString().slice(0, 10);
      ctx.res.status(200);
      ctx.res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
      ctx.res.setHeader('Content-Disposition', `attachment; filename="users-${ctx.tenant.slug}-${day}.ndjson"`);
      try {
        await ctx.services.userImport.exportUsers(ctx.em, ctx.tenant.id, responseSink(ctx.res));
        ctx.res.end();
      } catch (err) {
        // Half a file must not look like a whole one: the connection is cut instead of ended.
        if (ctx.res.headersSent) ctx.res.destroy();
        throw err;
      }
      return null;
    }),

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
      errorReasons: { 400: ['invalid_cursor'] },
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
      // an admin creating a user may mail them the link to set a password
      rateLimit: { ip: ADMIN_USER_MAIL_PER_IP },
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
      errorReasons: { 400: ['password_too_short', 'password_too_common'], 409: ['email_taken'] },
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
      const user = await ctx.services.userAdministration.create(ctx.scope, input);
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
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.userAdministration.unlock(ctx.scope, input.userId);
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
      errorReasons: { 404: ['not_found'] },
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
        summary: 'Change a user\'s role, suspend / reactivate them, set their custom data, name or picture; suspending ends their sessions at once',
        description:
          'A role change applies to the user\'s existing sessions at once. The last active Admin cannot be demoted or ' +
          'suspended (409 `last_admin`); a `Pending` user becomes `Active` by verifying their address (409 `email_not_verified`). ' +
          '`customData` replaces the user\'s custom data: a JSON object of at most 4 KiB (400 `custom_data_too_large`), shown on the User ' +
          'object and as the `custom_data` claim of the OpenID Provider (scope `custom_data`); a test API key may not set it (403 `live_key_required`). ' +
          '`name` (1 to 128 characters) and `picture` (an `https://` URL, at most 2048 characters) are the rules of PATCH me; `null` clears one; ' +
          'audited `UserProfileUpdated` (`details.changed`).',
        errorResponses: {
          400: 'Invalid body or userId (a name or picture outside its rules: `validation_failed`), or custom data over 4 KiB (`custom_data_too_large`)',
          401: 'No or invalid credential',
          403: 'Not an admin, or a test API key setting custom data (`live_key_required`)', 404: 'Unknown tenant or user',
          409: 'Last active admin (`last_admin`), or a Pending user set Active (`email_not_verified`)', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['custom_data_too_large'], 404: ['not_found'], 409: ['last_admin', 'email_not_verified'] },
    })
    .input(
      z.object({
        userId: z.uuid(), role: z.enum(USER_ROLES).optional(), status: z.enum(['Active', 'Suspended']).optional(),
        customData: z.record(z.string(), z.unknown()).optional(),
        name: profileName.nullable().optional(), picture: profilePicture.nullable().optional(),
      }),
    )
    .output(userOutput)
    .mutation(async ({ ctx, input }) => {
      // custom data may decide access in the tenant's own apps (plan, flags): not from a test key
      if (input.customData !== undefined && ctx.principal.kind === 'api_key' && ctx.principal.environment !== 'live') {
        throw SESSION_ERRORS.liveKeyRequiredForCustomData();
      }
      const change = { role: input.role, status: input.status, customData: input.customData, name: input.name, picture: input.picture };
      const user = await ctx.services.userAdministration.change(ctx.scope, input.userId, change);
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
      errorReasons: { 404: ['not_found'], 409: ['last_admin'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.accounts.softDelete(ctx.scope, input.userId);
      return OK;
    }),

  sendPasswordReset: adminProcedure
    .meta({
      rateLimit: { ip: ADMIN_USER_MAIL_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/password-reset', protect: true, tags,
        summary: 'Mail a user the password-reset link (valid one hour; the admin never sees it)',
        errorResponses: { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited (60 per hour per client IP)' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.userAdministration.sendPasswordReset(ctx.scope, input.userId);
      return OK;
    }),

  sendVerificationMail: adminProcedure
    .meta({
      rateLimit: { ip: ADMIN_USER_MAIL_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/verification-email', protect: true, tags,
        summary: 'Mail a user whose address is not verified a new verification link',
        errorResponses: {
          401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 409: 'Already verified (`email_already_verified`)',
          429: 'Rate limited (60 per hour per client IP)',
        },
      },
      errorReasons: { 404: ['not_found'], 409: ['email_already_verified'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.userAdministration.sendVerificationMail(ctx.scope, input.userId);
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
      errorReasons: { 404: ['not_found'], 409: ['erasure_requested_by_user', 'email_taken'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(userOutput)
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.services.userAdministration.restore(ctx.scope, input.userId);
      return toUserOutput(user, ctx.tenant);
    }),

  disableTotp: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/totp/disable', tags, protect: true,
        summary: "Remove a user's TOTP factor (active and pending); idempotent",
        errorResponses: { 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ userId: z.string().min(1) }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.totp.disable(ctx.scope, input.userId);
      return OK;
    }),

  exportUser: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/{userId}/export', tags: dataProtectionTags, protect: true,
        summary: 'Download everything held about a user of the tenant as JSON (admin; soft-deleted users included until erased)',
        errorResponses: { 400: 'Invalid user id', 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(userExportOutput)
    .query(async ({ ctx, input }) => {
      const data = await ctx.services.dataExport.exportUser(ctx.scope, input.userId, 'admin');
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
      errorReasons: { 404: ['not_found'] },
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
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid(), sessionId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.sessions.revokeOwnedSession(ctx.scope, input.userId, input.sessionId, 'session_revoked_by_admin');
      return OK;
    }),

  roles: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/{userId}/roles', protect: true, tags: [...tags, 'access control'],
        summary: 'The roles a user holds (the workspace\'s own roles, docs/oidc.md "Roles and permissions"; not the built-in Admin/Member)',
        errorResponses: { 400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
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
      errorReasons: { 400: ['unknown_role'], 404: ['not_found'] },
    })
    .input(z.object({ userId: z.uuid(), roleIds: roleIdsInput }))
    .output(z.object({ roles: z.array(roleOutput) }))
    .mutation(async ({ ctx, input }) => ({
      roles: (await ctx.services.roleAssignments.setRolesOfUser(ctx.scope, input.userId, input.roleIds)).map(toRoleOutput),
    })),
});
