import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DEFAULT_TENANT_POLICIES, type Tenant } from '../../entities/tenant.js';
import { newUser } from '../../entities/new-user.js';
import type { User } from '../../entities/user.js';
import { normalizeEmail } from '../../lib/email.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { TENANT_ERRORS } from '../../errors/tenant.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import { actingAs } from '../../lib/request-scope.js';
import { hashPassword } from '../../security/passwords.js';
import type { AuditService } from '../audit/audit-service.js';
import type { IssuedTokens, SessionService } from '../sessions/session-service.js';
import type { EmailVerificationService } from '../lifecycle/email-verification-service.js';
import { DEFAULT_LOCALE } from '../../lib/locales.js';
import { assertPasswordAllowed } from '../account-policy/password-policy.js';
import { insertUser } from '../../queries/user.js';
import { insertTenant } from '../../queries/tenant.js';
import { slugify } from '../../lib/slug.js';

export { SLUG_MAX_LENGTH, slugify, TENANT_NAME_PATTERN } from '../../lib/slug.js';

/** Input of tenant creation once both body forms are reduced to one. */
export interface CreateTenantInput {
  name: string;
  email: string;
  password: string;
}

/** Tenants: creation with the first admin, and look-up by slug. */
export class TenantService {
  constructor(
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly emailVerification: EmailVerificationService,
  ) {}

  /**
   * Whether this request may create a workspace: always when `TENANT_CREATION_TOKEN` is unset;
   * otherwise only with `Authorization: Bearer <that token>`, compared in constant time (of the
   * SHA-256 digests, so the length leaks nothing either).
   * @throws ApiError 401 `tenant_creation_token_required`.
   */
  authorizeCreation(creationToken: string | undefined, authorization: string | undefined): void {
    if (creationToken === undefined) return;
    const presented = /^Bearer[ \t]+(\S{1,1024})[ \t]*$/i.exec(authorization ?? '')?.[1] ?? '';
    const digest = (value: string) => createHash('sha256').update(value).digest();
    if (!timingSafeEqual(digest(presented), digest(creationToken))) {
      throw TENANT_ERRORS.creationTokenRequired();
    }
  }

  /**
   * Creates a tenant (plan `Free`, MFA policy `Optional`) with its first `Admin` user and a session
   * for that user, in one transaction, and mails the Admin a link to verify the address
   * (docs/lifecycle.md). Audits `TenantCreated`, `UserSignup`, `SessionCreated`.
   * @throws ApiError 400 `invalid_name` when the name yields an empty slug, 400 `password_too_short` /
   *   `password_too_common` (a new workspace's password policy), 409 `slug_taken`.
   */
  async create(em: EntityManager, input: CreateTenantInput, meta: RequestMeta): Promise<{ tenant: Tenant; user: User; tokens: IssuedTokens }> {
    const slug = slugify(input.name);
    if (!slug) throw TENANT_ERRORS.invalidName();
    assertPasswordAllowed(DEFAULT_TENANT_POLICIES, input.password);
    const passwordHash = await hashPassword(input.password);
    const now = new Date();
    const tenant: Tenant = {
      id: randomUUID(),
      slug,
      name: input.name,
      plan: 'Free',
      mfaPolicy: 'Optional',
      requireEmailVerification: false,
      signupPolicy: 'Open',
      signupEmailDomains: [],
      idpClientId: null,
      idpClientSecretEnc: null,
      idpIssuer: null,
      idpAllowedEmailDomains: null,
      idpMfaTrust: false,
      // the creator's language (Accept-Language) becomes the workspace's default
      defaultLocale: meta.locale ?? DEFAULT_LOCALE,
      displayName: null,
      primaryColor: null,
      supportUrl: null,
      logoEtag: null,
      darkLogoEtag: null,
      brandDisplay: 'LogoAndName',
      ...DEFAULT_TENANT_POLICIES,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    };
    const user = newUser({ tenantId: tenant.id, email: normalizeEmail(input.email), passwordHash, status: 'Active', role: 'Admin', locale: meta.locale ?? null }, now);
    try {
      const tokens = await em.transactional(async (tx) => {
        await insertTenant(tx, tenant);
        await insertUser(tx, user);
        // the request had no workspace: its scope starts here, with the first Admin acting
        const byCreator = actingAs({ em: tx, tenant, meta }, user.id);
        await this.audit.record(byCreator, { action: 'TenantCreated', target: { type: 'tenant', id: tenant.id }, details: { slug, name: tenant.name } });
        await this.audit.record(byCreator, {
          action: 'UserSignup', target: { type: 'user', id: user.id }, details: { email: user.email, role: user.role, via: 'tenant_creation' },
        });
        // the first Admin proves the address too (docs/security.md): until then it is unverified,
        // and no provider sign-in ever reclaims an Admin's account (IdpService)
        await this.emailVerification.send(tx, tenant, user, meta.locale);
        return this.sessions.start(byCreator, user, 'password');
      });
      return { tenant, user, tokens };
    } catch (err) {
      if (isUniqueViolation(err)) throw TENANT_ERRORS.slugTaken({ slug });
      throw err;
    }
  }
}
