import type { Locale } from '../../lib/locales.js';
import { passkeysOf, type PasskeyView } from '../passkeys/passkey-service.js';
import { findAuditEventsAboutUser, type AuditItem } from '../../queries/audit-event.js';
import type { UserRole, UserStatus } from '../../entities/user.js';
import type { RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import { findIdentitiesOfUser } from '../../queries/idp-identity.js';
import { findSessionsOfUser } from '../../queries/session.js';
import { findApplicationSignInsOfUser } from '../../queries/oidc-hosted-login.js';
import { findUserForExport } from '../../queries/user.js';
import { findMembershipsOfUserForExport } from '../../queries/organization-membership.js';
import { findRolesOfUser } from '../../queries/user-access-role.js';
import { countUnusedRecoveryCodes } from '../../queries/recovery-code.js';
import { findGrantedApplicationsOfAccount } from '../../queries/oidc-payload.js';
import { USER_ERRORS } from '../../errors/user.js';

/**
 * Everything the service holds about one user (GDPR art. 15 access, art. 20 portability), as JSON;
 * timestamps are ISO 8601 strings. `GET me/export` and `GET users/{userId}/export` answer it
 * (docs/lifecycle.md "Export").
 */
export interface UserDataExport {
  format: 'tenant-identity.user-export.v1';
  exportedAt: string;
  user: {
    id: string;
    email: string;
    status: UserStatus;
    role: UserRole;
    createdAt: string;
    updatedAt: string;
    lastLoginAt: string | null;
    emailVerifiedAt: string | null;
    deletedAt: string | null;
    /** The language the person last used the pages in (mails to them speak it); null: never said. */
    locale: Locale | null;
    /** The display name the person or an Admin set; null when not set. */
    name: string | null;
    /** The picture URL the person or an Admin set; null when not set. */
    picture: string | null;
    /** The workspace's own JSON object about the person (plan, flags…), as set through PATCH users/{userId} or an import; `{}` when none. */
    customData: Record<string, unknown>;
    /** When an import created the user (docs/import.md); null for users who came in any other way. */
    importedAt: string | null;
    /** Whether the user has a password (never the password or its hash). */
    passwordSet: boolean;
  };
  tenant: { id: string; slug: string; name: string };
  /** Second-factor state; `recoveryCodesRemaining` counts the unused recovery codes (never a code or its hash). */
  mfa: { totpEnrolled: boolean; totpEnrolledAt: string | null; recoveryCodesRemaining: number };
  sessions: {
    id: string;
    createdAt: string;
    lastRefreshedAt: string | null;
    revokedAt: string | null;
    revokedReason: string | null;
    ip: string | null;
    userAgent: string | null;
    method: string | null;
    /**
     * The workspace's applications this session signed in to through its OpenID Provider, last
     * sign-in newest first; `applicationName` null once the application was deleted; `[]` when none.
     */
    applications: { clientId: string; applicationName: string | null; firstSignedInAt: string; lastSignedInAt: string }[];
  }[];
  idpLinks: { issuer: string; subject: string; email: string | null; createdAt: string; lastLoginAt: string | null }[];
  passkeys: PasskeyView[];
  /** The organizations of the tenant the person belongs to, oldest membership first, with the names of their roles there. */
  organizations: { organizationId: string; name: string; joinedAt: string; roles: string[] }[];
  /** The tenant's own access roles the person holds (not the built-in `user.role`), by name. */
  accessRoles: { roleId: string; name: string; assignedAt: string }[];
  /** The workspace's applications its OpenID Provider granted access for the person, one entry per application, its grants merged (no grant id, code or token). */
  applicationGrants: {
    clientId: string;
    applicationName: string;
    scopes: string[];
    resources: { resource: string; scopes: string[] }[];
    grantedAt: string | null;
    expiresAt: string | null;
    /** The organization the person picked for the application (scope `organizations`), as remembered on its grant; null when none. */
    selectedOrganizationId: string | null;
  }[];
  auditEvents: (Omit<AuditItem, 'createdAt'> & { createdAt: string })[];
}

/** The list sections of the export (the fields holding an array); `GdprExportCompleted` counts each. */
type ExportList = { [K in keyof UserDataExport]: UserDataExport[K] extends unknown[] ? K : never }[keyof UserDataExport];

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * Builds personal-data exports (GDPR art. 15 and 20). Its operations take the request's scope first
 * (RequestScope) and audit with the scope's actor and metadata.
 */
export class DataExportService {
  constructor(private readonly audit: AuditService) {}

  /**
   * Exports one user of the tenant, soft-deleted ones included (their data is still held until the
   * erasure sweep). Audits `GdprExportRequested` before and `GdprExportCompleted` after collecting,
   * the latter with the number of entries of each list section (`sessions`, `idpLinks`, `passkeys`,
   * `organizations`, `accessRoles`, `applicationGrants`, `auditEvents`).
   * The IP address and user agent of events someone else performed are left out: they are that
   * person's data, not the subject's. Both events are the scope's actor's (the person or the Admin).
   * Besides the user row it reads their sessions with the applications each signed in to (one query
   * for all sessions), provider links (external IdP and enterprise SSO alike), passkeys,
   * organization memberships with their roles, access roles, the count of unused recovery codes, the
   * applications the OpenID Provider holds grants to, and audit events, each by tenant id and user id.
   * @param requestedBy `self` (GET me/export) or `admin` (GET users/{userId}/export).
   * @throws ApiError 404 when the tenant holds no user with this id.
   */
  async exportUser(scope: RequestScope, userId: string, requestedBy: 'self' | 'admin'): Promise<UserDataExport> {
    const { em, tenant } = scope;
    const user = await findUserForExport(em, tenant.id, userId);
    if (!user) throw USER_ERRORS.userNotFound();
    const target = { type: 'user', id: user.id };
    await this.audit.record(scope, { action: 'GdprExportRequested', target, details: { requestedBy } });

    const sessions = await findSessionsOfUser(em, tenant.id, user.id);
    const signIns = new Map<string, UserDataExport['sessions'][number]['applications']>();
    for (const a of await findApplicationSignInsOfUser(em, tenant.id, user.id)) {
      const list = signIns.get(a.sessionId) ?? [];
      list.push({ clientId: a.clientId, applicationName: a.applicationName, firstSignedInAt: iso(a.firstSignedInAt)!, lastSignedInAt: iso(a.lastSignedInAt)! });
      signIns.set(a.sessionId, list);
    }
    const idpLinks = await findIdentitiesOfUser(em, tenant.id, user.id);
    const passkeys = await passkeysOf(em, tenant.id, user.id);
    const memberships = await findMembershipsOfUserForExport(em, tenant.id, user.id);
    const accessRoles = await findRolesOfUser(em, tenant.id, user.id);
    const recoveryCodesRemaining = await countUnusedRecoveryCodes(em, tenant.id, user.id);
    const grants = await findGrantedApplicationsOfAccount(em, tenant.id, user.id);
    const events = await findAuditEventsAboutUser(em, tenant.id, user.id);

    const result: UserDataExport = {
      format: 'tenant-identity.user-export.v1',
      exportedAt: new Date().toISOString(),
      user: {
        id: user.id,
        email: user.email,
        status: user.status,
        role: user.role,
        createdAt: iso(user.createdAt)!,
        updatedAt: iso(user.updatedAt)!,
        lastLoginAt: iso(user.lastLoginAt),
        emailVerifiedAt: iso(user.emailVerifiedAt),
        deletedAt: iso(user.deletedAt),
        locale: user.locale,
        name: user.name,
        picture: user.picture,
        customData: user.customData,
        importedAt: iso(user.importedAt),
        passwordSet: user.passwordSet,
      },
      tenant: { id: tenant.id, slug: tenant.slug, name: tenant.name },
      mfa: { totpEnrolled: user.totpActive, totpEnrolledAt: user.totpActive ? iso(user.totpEnrolledAt) : null, recoveryCodesRemaining },
      sessions: sessions.map((s) => ({
        id: s.id,
        createdAt: iso(s.createdAt)!,
        lastRefreshedAt: iso(s.lastRefreshedAt),
        revokedAt: iso(s.revokedAt),
        revokedReason: s.revokedReason,
        ip: s.ip,
        userAgent: s.userAgent,
        method: s.method,
        applications: signIns.get(s.id) ?? [],
      })),
      idpLinks: idpLinks.map((l) => ({
        issuer: l.issuer,
        subject: l.subject,
        email: l.email,
        createdAt: iso(l.createdAt)!,
        lastLoginAt: iso(l.lastLoginAt),
      })),
      passkeys,
      organizations: memberships.map((m) => ({ organizationId: m.organizationId, name: m.organizationName, joinedAt: iso(m.joinedAt)!, roles: m.roles })),
      accessRoles: accessRoles.map((r) => ({ roleId: r.id, name: r.name, assignedAt: iso(r.assignedAt)! })),
      applicationGrants: grants.map((g) => ({
        clientId: g.clientId,
        applicationName: g.applicationName,
        scopes: g.scopes,
        resources: g.resources,
        grantedAt: iso(g.grantedAt),
        expiresAt: iso(g.expiresAt),
        selectedOrganizationId: g.selectedOrganizationId,
      })),
      auditEvents: events.map((item) => {
        // other people's IP and user agent stay out of this user's export
        const own = item.actorId === user.id || item.actorType === 'system';
        return { ...item, ip: own ? item.ip : null, userAgent: own ? item.userAgent : null, createdAt: item.createdAt.toISOString() };
      }),
    };
    // a Record of every list section: a section added to UserDataExport does not compile until counted here
    const counts: Record<ExportList, number> = {
      sessions: result.sessions.length, idpLinks: result.idpLinks.length, passkeys: result.passkeys.length,
      organizations: result.organizations.length, accessRoles: result.accessRoles.length,
      applicationGrants: result.applicationGrants.length, auditEvents: result.auditEvents.length,
    };
    await this.audit.record(scope, { action: 'GdprExportCompleted', target, details: { requestedBy, ...counts } });
    return result;
  }
}
