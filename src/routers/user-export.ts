import { LOCALES } from '../lib/locales.js';
import { z } from 'zod';
import { USER_ROLES, USER_STATUSES } from '../entities/user.js';
import type { Response } from 'express';
import type { UserDataExport } from '../services/lifecycle/data-export-service.js';
import { passkeyOutput } from './passkey-schemas.js';
import { auditEventOutput, emailOutput, timestampOutput } from './schemas.js';

/** OpenAPI tag of the personal-data and tenant-deletion operations. */
export const dataProtectionTags = ['data protection'];

const timestamp = timestampOutput;
const nullableTimestamp = timestamp.nullable();

/** GDPR art. 15/20 export of one user (see DataExportService): the one definition of its shape. */
export const userExportOutput = z
  .object({
    format: z.literal('tenant-identity.user-export.v1'),
    exportedAt: timestamp,
    user: z.object({
      id: z.string(),
      email: emailOutput,
      status: z.enum(USER_STATUSES),
      role: z.enum(USER_ROLES),
      createdAt: timestamp,
      updatedAt: timestamp,
      lastLoginAt: nullableTimestamp,
      emailVerifiedAt: nullableTimestamp,
      deletedAt: nullableTimestamp,
      locale: z.enum(LOCALES).nullable().meta({ description: 'The language the person last used the pages in; mails to them speak it' }),
      name: z.string().nullable().meta({ description: 'The display name; null when not set' }),
      picture: z.string().nullable().meta({ description: 'The picture URL; null when not set' }),
      customData: z.record(z.string(), z.unknown()).meta({ description: 'The workspace\'s own JSON object about the user (the User object\'s `customData`); `{}` when none' }),
      importedAt: nullableTimestamp.meta({ description: 'When an import created the user; null for users who came in any other way' }),
      passwordSet: z.boolean().meta({ description: 'Whether the user has a password (the password and its hash are never exported)' }),
    }),
    tenant: z.object({ id: z.string(), slug: z.string(), name: z.string() }),
    mfa: z
      .object({
        totpEnrolled: z.boolean(),
        totpEnrolledAt: nullableTimestamp,
        recoveryCodesRemaining: z.number().int().min(0).meta({ description: 'How many unused recovery codes the user has (0 when none); the codes and their hashes are never exported' }),
      })
      .meta({ description: 'Secrets are never exported' }),
    sessions: z.array(
      z.object({
        id: z.string(),
        createdAt: timestamp,
        lastRefreshedAt: nullableTimestamp,
        revokedAt: nullableTimestamp,
        revokedReason: z.string().nullable(),
        ip: z.string().nullable(),
        userAgent: z.string().nullable(),
        method: z.string().nullable().meta({ description: 'How the session was authenticated (docs/api-rules.md "Sessions of a user")' }),
        applications: z
          .array(
            z.object({
              clientId: z.string(),
              applicationName: z.string().nullable().meta({ description: 'The application\'s name; null once the application was deleted' }),
              firstSignedInAt: timestamp.meta({ description: 'When this session first signed in to the application' }),
              lastSignedInAt: timestamp.meta({ description: 'When this session last signed in to the application' }),
            }),
          )
          .meta({ description: 'The workspace\'s applications this session signed in to through its OpenID Provider (docs/oidc.md "Sessions end everywhere"), last sign-in newest first; empty when none' }),
      }),
    ),
    idpLinks: z.array(
      z.object({ issuer: z.string(), subject: z.string(), email: emailOutput.nullable(), createdAt: timestamp, lastLoginAt: nullableTimestamp }),
    ),
    passkeys: z.array(passkeyOutput).meta({ description: 'Registered passkeys (WebAuthn); public keys are not exported' }),
    organizations: z
      .array(
        z.object({
          organizationId: z.string(),
          name: z.string(),
          joinedAt: timestamp.meta({ description: 'When the user became a member' }),
          roles: z.array(z.string()).meta({ description: 'Names of the organization roles the user holds there, sorted; empty when none' }),
        }),
      )
      .meta({ description: 'Organizations of the workspace the user belongs to (docs/organizations.md), oldest membership first' }),
    accessRoles: z
      .array(
        z.object({
          roleId: z.string(),
          name: z.string(),
          assignedAt: timestamp.meta({ description: 'When the user\'s set of roles holding it was last written' }),
        }),
      )
      .meta({ description: 'The workspace\'s own roles the user holds (PUT users/{userId}/roles), by name; the built-in role is `user.role`' }),
    applicationGrants: z
      .array(
        z.object({
          clientId: z.string(),
          applicationName: z.string(),
          scopes: z.array(z.string()).meta({ description: 'OpenID scopes granted' }),
          resources: z
            .array(z.object({ resource: z.string(), scopes: z.array(z.string()) }))
            .meta({ description: 'Per API (RFC 8707 `resource`), the permissions granted there' }),
          grantedAt: nullableTimestamp.meta({ description: 'When the application was first granted access' }),
          expiresAt: nullableTimestamp.meta({ description: 'When its last grant expires; null when one does not' }),
          selectedOrganizationId: z.string().nullable().meta({
            description: 'The organization the user picked for the application when it asked for scope `organizations` (docs/oidc.md "Organization picker"), as remembered on its latest grant holding a pick, even if they have left it since; null when none',
          }),
        }),
      )
      .meta({ description: 'The workspace\'s applications its OpenID Provider holds grants to for the user (docs/oidc.md), one entry per application (its grants merged), oldest first; no grant id, code or token' }),
    auditEvents: z.array(auditEventOutput).meta({ description: 'Audit events the user performed or that concern them or their sessions, oldest first' }),
  })
  .meta({ id: 'UserDataExport' });


/** Lets a browser save the export as a file. */
export function asAttachment(res: Response, data: UserDataExport): UserDataExport {
  res.setHeader('Content-Disposition', `attachment; filename="user-export-${data.user.id}.json"`);
  return data;
}
