import type { SchemaObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import { EMAIL_PATTERN, emailAddress } from '../lib/email.js';
import { ACTOR_TYPES, AUDIT_ACTIONS } from '../entities/audit-event.js';
import { USER_ROLES, USER_STATUSES, type User } from '../entities/user.js';
import type { IssuedTokens, LiveSession } from '../services/sessions/session-service.js';

/** Limits shared (docs/api-rules.md "Limits") by several routes. */
export const email = emailAddress;
/** A password presented for checking (login, currentPassword): 1 to 1024 characters. */
export const presentedPassword = z.string().min(1).max(1024);
/**
 * A password being set (signup, newPassword, invite acceptance): at most 1024 characters. The
 * workspace's password policy (at least 12 characters, not a common password) is checked by the
 * service, answering 400 `password_too_short` / `password_too_common` (docs/api-rules.md "Workspace policies").
 */
export const newPassword = z.string().min(1).max(1024)
  .meta({ description: 'At least the workspace\'s `passwordPolicy.minLength` characters (12 or more), and not a common password when `passwordPolicy.rejectCommon`' });
/** A one-time code: exactly six digits (TOTP or email). */
export const oneTimeCode = z.string().regex(/^\d{6}$/, 'must be exactly 6 digits');
/** An opaque refresh or invite token: 1 to 1024 characters. */
export const opaqueToken = z.string().min(1).max(1024);
export const isoDateTime = z.iso.datetime({ offset: true });

/** A timestamp in an answer: ISO 8601 in UTC (`Date.toISOString()`), documented as `format: date-time`. */
export const timestampOutput = z.string().meta({ format: 'date-time' });
/** An email address in an answer, documented as `format: email` (stored addresses are not re-validated). */
export const emailOutput = z.string().meta({ format: 'email', pattern: EMAIL_PATTERN.source });

/** The answer of a TOTP enroll step: the base32 shared secret and its otpauth URI (for a QR code). */
export const totpEnrollmentOutput = z.object({
  secret: z.string().meta({ description: 'RFC 4648 base32 shared secret (160 bits)' }),
  otpauthUri: z.string().meta({ description: 'otpauth://totp/<issuer>:<email>?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30' }),
});

/** A TOTP recovery code as typed: `ABCD-EFGH-IJKL`, case, spaces and dashes ignored (docs/mfa.md "Recovery codes"). */
export const recoveryCodeInput = z.string().min(1).max(64).meta({ description: 'A single-use recovery code, e.g. `ABCD-EFGH-IJKL`; case, spaces and dashes are ignored' });

/** The recovery codes of a new set, in plaintext: in the answer that creates them, and never again. */
export const recoveryCodesOutput = z.array(z.string()).meta({
  description: 'Ten single-use recovery codes (`ABCD-EFGH-IJKL`, 60 random bits each), shown only in this answer; each replaces a TOTP code once',
});

/** One live session of a user (docs/api-rules.md "Sessions of a user"). */
export const sessionSummaryOutput = z
  .object({
    id: z.string(),
    createdAt: timestampOutput,
    lastUsedAt: z.string().meta({ format: 'date-time', description: 'The last refresh, or createdAt; authenticated requests do not update it' }),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    method: z.string().nullable().meta({
      description: 'How the session was authenticated: `password`, `password+totp`, `password+recovery_code`, `password+email_otp`, `idp`, `idp+totp`, …; null for sessions older than the field',
    }),
    current: z.boolean().meta({ description: 'True for the session of the access token of this request' }),
    applications: z
      .array(
        z.object({
          clientId: z.string(),
          name: z.string().nullable().meta({ description: 'The application\'s name; null once it was deleted' }),
          lastSignedInAt: timestampOutput,
        }),
      )
      .meta({
        description:
          'The workspace\'s applications this session signed in to through its OpenID Provider, newest first; ending the session ends ' +
          'those sign-ins too (their provider sessions, grants and tokens)',
      }),
  })
  .meta({ id: 'SessionSummary' });

/** `{ items }` of the session lists. */
export const sessionListOutput = z.object({ items: z.array(sessionSummaryOutput) });

/** Shapes the live sessions of a user as the `SessionSummary` list; `currentSessionId` is the token's `sid`, if any. */
export function toSessionList(sessions: LiveSession[], currentSessionId: string | null): z.infer<typeof sessionListOutput> {
  return {
    items: sessions.map((session) => ({
      id: session.id,
      createdAt: session.createdAt.toISOString(),
      lastUsedAt: session.lastUsedAt.toISOString(),
      ip: session.ip,
      userAgent: session.userAgent,
      method: session.method,
      current: session.id === currentSessionId,
      applications: session.applications.map((app) => ({ clientId: app.clientId, name: app.name, lastSignedInAt: app.lastSignedInAt.toISOString() })),
    })),
  };
}

/**
 * The JSON Schema of a request body object as the document shows it. Unknown fields are ignored by
 * every body (Zod's default), so the schema allows them, as the generated ones do.
 */
function bodySchema(form: z.ZodObject): SchemaObject {
  const { $schema: _dialect, ...schema } = JSON.parse(JSON.stringify(z.toJSONSchema(form, { io: 'input' }))) as SchemaObject & { $schema?: string };
  return schema;
}

/**
 * A documented body that is exactly one of several forms (`oneOf`, each titled), for a Zod input
 * that accepts them through one object and a refinement. Use as `.meta({ override: … })`.
 */
export function documentOneOf(forms: Record<string, z.ZodObject>): SchemaObject {
  const keysOf = (form: z.ZodObject) => Object.keys(form.shape);
  return {
    oneOf: Object.entries(forms).map(([title, form]) => {
      // A field only another form has makes the body that other form (the refinements refuse a mix).
      const foreign = Object.values(forms).filter((other) => other !== form).flatMap(keysOf).filter((key) => !keysOf(form).includes(key));
      const schema = bodySchema(form);
      const forbidden: Record<string, SchemaObject> = Object.fromEntries([...new Set(foreign)].map((key) => [key, { not: {}, description: 'Not in this form' }]));
      return { title, ...schema, properties: { ...schema.properties, ...forbidden } };
    }),
  };
}

/**
 * A documented body with every field of `form` where at least one of `atLeastOne` must be present
 * (`anyOf` of `required`), for a Zod input that checks it with a refinement. Use as `.meta({ override: … })`.
 */
export function documentAtLeastOneOf(form: z.ZodObject, atLeastOne: readonly string[]): SchemaObject {
  return { ...bodySchema(form), anyOf: atLeastOne.map((field) => ({ required: [field] })) };
}

/**
 * A display name (of an API key, application, passkey, workspace): at most `max` characters as sent,
 * surrounding spaces removed, not blank. The document shows `maxLength`, `minLength` and the pattern
 * `\S`, which is exactly what is accepted.
 */
export function displayName(max: number) {
  return z.string().max(max).trim().min(1).regex(/\S/, 'must not be blank');
}

/** `{ ok: true }`. */
export const okOutput = z.object({ ok: z.literal(true) });
export const OK = { ok: true } as const;

/**
 * A query-string boolean: `true`/`false` (also `1`/`0`). Plain `z.boolean()` would be coerced by
 * the REST façade with `Boolean("false") === true`.
 */
export const queryBoolean = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');

/** The user object inside a session response. */
export const sessionUser = z.object({
  id: z.string(),
  email: emailOutput,
  role: z.enum(USER_ROLES),
  status: z.enum(USER_STATUSES),
});

/** A new session as sign-up, login and refresh answer it (docs/api-rules.md "Credentials and sessions"). */
export const sessionOutput = z
  .object({
    user: sessionUser,
    accessToken: z.string().meta({ description: 'HS256 JWT, valid 900 seconds' }),
    refreshToken: z.string().optional().meta({
      description: 'Opaque, valid 2592000 seconds, rotated on every refresh. Always present on the REST API; the hosted '
        + 'pages receive it in an HttpOnly cookie instead (docs/decisions.md).',
    }),
    accessTokenExpiresIn: z.number().int(),
    refreshTokenExpiresIn: z.number().int(),
  })
  .meta({ id: 'Session' });

/** Session with `tenantSlug` (tenant creation, invite acceptance). */
export const tenantSessionOutput = sessionOutput.extend({ tenantSlug: z.string() });

/** Shapes a user and the tokens of their new session as the `Session` schema. */
export function toSession(user: Pick<User, 'id' | 'email' | 'role' | 'status'>, tokens: IssuedTokens): z.infer<typeof sessionOutput> {
  return {
    user: { id: user.id, email: user.email, role: user.role, status: user.status },
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    accessTokenExpiresIn: tokens.accessTokenExpiresIn,
    refreshTokenExpiresIn: tokens.refreshTokenExpiresIn,
  };
}

/** A user as GET me and the users list show it (docs/api-rules.md "Resources"). */
export const userOutput = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    email: emailOutput,
    status: z.enum(USER_STATUSES),
    role: z.enum(USER_ROLES),
    createdAt: timestampOutput,
    lastLoginAt: timestampOutput,
    tenant: z.object({ slug: z.string(), name: z.string() }),
    totpEnrolled: z.boolean(),
    emailVerified: z.boolean(),
    customData: z.record(z.string(), z.unknown()).meta({ description: 'The workspace\'s own JSON object about the user (at most 4 KiB); the `custom_data` claim' }),
    name: z.string().nullable().meta({ description: 'The person\'s display name (1 to 128 characters), null when not set; the OpenID `name` claim (scope `profile`)' }),
    picture: z.string().nullable().meta({ format: 'uri', description: 'An https URL of the person\'s picture, null when not set; the OpenID `picture` claim (scope `profile`)' }),
  })
  .meta({ id: 'User' });

/** Shapes a user as the `User` schema. `lastLoginAt` falls back to `createdAt` before any sign-in. */
export function toUserOutput(user: User, tenant: { slug: string; name: string }): z.infer<typeof userOutput> {
  return {
    id: user.id,
    tenantId: user.tenantId,
    email: user.email,
    status: user.status,
    role: user.role,
    createdAt: user.createdAt.toISOString(),
    lastLoginAt: (user.lastLoginAt ?? user.createdAt).toISOString(),
    tenant: { slug: tenant.slug, name: tenant.name },
    totpEnrolled: user.totpEnrolledAt !== null && user.totpSecretEnc !== null,
    emailVerified: user.emailVerifiedAt !== null,
    customData: user.customData ?? {},
    name: user.name ?? null,
    picture: user.picture ?? null,
  };
}

/** One audit event as GET audit and the personal-data export show it (docs/audit.md). */
export const auditEventOutput = z
  .object({
    id: z.string(),
    action: z.enum(AUDIT_ACTIONS),
    actorType: z.enum(ACTOR_TYPES),
    actorId: z.string().nullable(),
    targetType: z.string().nullable(),
    targetId: z.string().nullable(),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    createdAt: timestampOutput,
  })
  .meta({ id: 'AuditEvent' });

const dailyCounts = z.array(z.object({ date: z.string().meta({ format: 'date', description: 'A UTC day, YYYY-MM-DD' }), count: z.number().int() }));

/** GET audit/activity: the console's start-page figures (docs/audit.md "Activity"). */
export const activityOutput = z
  .object({
    from: z.string().meta({ format: 'date', description: 'First UTC day covered' }),
    to: z.string().meta({ format: 'date', description: 'Last UTC day covered (today)' }),
    signIns: dailyCounts,
    failedSignIns: dailyCounts,
    signUps: dailyCounts,
    activeUsers: z.object({ last7Days: z.number().int(), last30Days: z.number().int() }),
    mfaAdoption: z.object({ users: z.number().int(), totp: z.number().int(), passkey: z.number().int(), anyFactor: z.number().int() }),
  })
  .meta({ id: 'Activity' });

/**
 * A DNS host name as an email domain: labels of letters, digits and inner hyphens, a dot at least;
 * stored lower-cased. The documented pattern is exactly what is accepted (either case, no spaces).
 */
export const emailDomain = z
  .string()
  .max(253)
  .regex(/^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'must be a domain name such as example.com')
  .toLowerCase();
