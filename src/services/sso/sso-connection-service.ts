import { randomUUID, X509Certificate } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import { isUniqueViolation } from '../../lib/errors.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import type { AuditService } from '../audit/audit-service.js';
import { findLatestEventsAboutTarget } from '../audit/audit-event-queries.js';
import { assertRecentSignIn } from '../mfa/mfa-enrollment-service.js';
import { ORGANIZATION_ERRORS } from '../organizations/organization-errors.js';
import { findOrganization } from '../organizations/organization-queries.js';
import type { OrganizationRoleService } from '../organizations/organization-role-service.js';
import { findUserEmail } from '../users/user-queries.js';
import { normalizeCertificate, parseIdentityProviderMetadata, type IdentityProviderSettings } from './saml-xml.js';
import type { SsoConnectionNotifier } from './sso-connection-notice.js';
import {
  deleteConnection, findConnection, findConnections, findDomainOwner, hasConnections, insertConnection, replaceConnectionDomains, updateConnection,
  type ConnectionChanges, type SsoConnectionWithDomains,
} from './sso-connection-queries.js';
import { SSO_ERRORS } from './sso-errors.js';

/** The identity provider of a SAML connection: its metadata XML, or its three values typed in. */
export type SamlProviderInput = { metadataXml: string } | { entityId: string; ssoUrl: string; certificate: string };

/** `POST sso-connections` (docs/sso.md "Connections"). */
export interface SsoConnectionInput {
  name: string;
  protocol: 'saml';
  /** Email domains, lower-case; each belongs to one connection of the tenant. */
  domains: string[];
  organizationId?: string | null | undefined;
  defaultOrganizationRoles?: string[] | undefined;
  providerPerformsMfa?: boolean | undefined;
  saml: SamlProviderInput;
}

/** `PATCH sso-connections/{id}`: any field of the input but the protocol. */
export type SsoConnectionPatch = Partial<Omit<SsoConnectionInput, 'protocol'>>;

/** The Admin changing a connection: a signed-in user and the session it uses. */
export interface ConnectionChanger {
  userId: string;
  sessionId: string;
}

/** How many refused responses GET sso-connections/{id} shows. */
export const RECENT_FAILURES = 10;

/** A refused response as the console shows it. */
export interface SsoFailure {
  at: Date;
  reason: string;
  message: string;
}

/** A signing certificate as the API shows it: never a private key, only what identifies it. */
export interface CertificateView {
  pem: string;
  subject: string;
  notAfter: Date;
  fingerprintSha256: string;
}

/** A connection as the API shows it, with the values to paste into the identity provider. */
export interface SsoConnectionView {
  id: string;
  name: string;
  protocol: 'saml';
  domains: string[];
  organizationId: string | null;
  defaultOrganizationRoles: string[];
  providerPerformsMfa: boolean;
  saml: { idpEntityId: string; ssoUrl: string; certificates: CertificateView[] };
  sp: { entityId: string; acsUrl: string; metadataUrl: string };
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The tenant's enterprise single sign-on connections (docs/sso.md "Connections"): create, list,
 * read, change, delete. Every change needs an Admin who signed in less than 10 minutes ago (never an
 * API key), is audited (`SsoConnectionCreated` / `Updated` / `Deleted`) and mailed to the other Admins.
 */
export class SsoConnectionService {
  constructor(
    private readonly config: Config,
    private readonly organizationRoles: OrganizationRoleService,
    private readonly audit: AuditService,
    private readonly notices: SsoConnectionNotifier,
  ) {}

  /** The service-provider values of a connection (SAML 2.0 Metadata §2.4.4): entity id = metadata URL, HTTP-POST ACS. */
  serviceProvider(tenant: Tenant, connectionId: string): SsoConnectionView['sp'] {
    const base = `${this.config.publicUrl}/v1/${encodeURIComponent(tenant.slug)}/sso/${connectionId}/saml`;
    return { entityId: `${base}/metadata`, acsUrl: `${base}/acs`, metadataUrl: `${base}/metadata` };
  }

  /** Whether the tenant has any connection (the sign-in page then tries single sign-on first). */
  async hasAny(em: EntityManager, tenantId: string): Promise<boolean> {
    return hasConnections(em, tenantId);
  }

  /** The tenant's connections, oldest first. */
  async list(em: EntityManager, tenant: Tenant): Promise<SsoConnectionView[]> {
    return (await findConnections(em, tenant.id)).map((connection) => this.view(tenant, connection));
  }

  /** One connection of the tenant. @throws ApiError 404 `not_found`. */
  async get(em: EntityManager, tenant: Tenant, id: string): Promise<SsoConnectionView> {
    return this.view(tenant, await this.find(em, tenant.id, id));
  }

  /**
   * The connection's latest refused responses (at most {@link RECENT_FAILURES}, newest first), from
   * the audit log's `UserLoginFailed` events about it: what an Admin setting it up needs to see.
   */
  async recentFailures(em: EntityManager, tenantId: string, id: string): Promise<SsoFailure[]> {
    const events = await findLatestEventsAboutTarget(em, tenantId, 'UserLoginFailed', 'sso_connection', id, RECENT_FAILURES);
    return events.map((event) => ({ at: event.createdAt, reason: String(event.details.reason ?? ''), message: String(event.details.message ?? '') }));
  }

  /** The stored connection of the tenant. @throws ApiError 404 `not_found`. */
  async find(em: EntityManager, tenantId: string, id: string): Promise<SsoConnectionWithDomains> {
    const connection = await findConnection(em, tenantId, id);
    if (!connection) throw SSO_ERRORS.connectionNotFound();
    return connection;
  }

  /**
   * Creates a connection.
   * @throws ApiError 401 `reauthentication_required`, 400 `invalid_saml_metadata` /
   *   `invalid_saml_certificate` / `invalid_sso_url` / `unknown_organization_role`, 404 `not_found`
   *   (organization), 409 `sso_domain_taken`.
   */
  async create(em: EntityManager, tenant: Tenant, input: SsoConnectionInput, by: ConnectionChanger, meta: RequestMeta): Promise<SsoConnectionView> {
    const changedBy = await this.assertMayChange(em, tenant, by);
    const provider = this.providerSettings(input.saml);
    const domains = normalizeDomains(input.domains);
    const now = new Date();
    const id = randomUUID();
    await em.transactional(async (tx) => {
      const roles = await this.checkOrganization(tx, tenant.id, input.organizationId ?? null, input.defaultOrganizationRoles ?? []);
      await insertConnection(tx, {
        id, tenantId: tenant.id, name: input.name, protocol: 'saml', organizationId: input.organizationId ?? null, defaultOrganizationRoles: roles,
        providerPerformsMfa: input.providerPerformsMfa ?? false, samlIdpEntityId: provider.entityId, samlSsoUrl: provider.ssoUrl,
        samlCertificates: provider.certificates, createdAt: now, updatedAt: now,
      });
      await this.setDomains(tx, tenant.id, id, domains);
      await this.audit.record(tx, {
        tenantId: tenant.id, action: 'SsoConnectionCreated', actor: { type: 'user', id: by.userId }, target: { type: 'sso_connection', id }, meta,
        details: { name: input.name, protocol: 'saml', domains, idpEntityId: provider.entityId, ssoUrl: provider.ssoUrl, organizationId: input.organizationId ?? null },
      });
    });
    await this.notices.notifyAdmins(em, tenant, { kind: 'created', name: input.name, domains, provider: provider.entityId, changedBy });
    return this.get(em, tenant, id);
  }

  /**
   * Changes a connection: any field given replaces the stored one (`saml` replaces all three
   * provider values; `organizationId: null` detaches the organization).
   * @throws as {@link create}, and 404 `not_found`.
   */
  async update(em: EntityManager, tenant: Tenant, id: string, patch: SsoConnectionPatch, by: ConnectionChanger, meta: RequestMeta): Promise<SsoConnectionView> {
    const changedBy = await this.assertMayChange(em, tenant, by);
    const provider = patch.saml ? this.providerSettings(patch.saml) : undefined;
    const domains = patch.domains ? normalizeDomains(patch.domains) : undefined;
    const updated = await em.transactional(async (tx) => {
      const current = await this.find(tx, tenant.id, id);
      const organizationId = patch.organizationId === undefined ? current.organizationId : patch.organizationId;
      const roles = await this.checkOrganization(tx, tenant.id, organizationId, patch.defaultOrganizationRoles ?? current.defaultOrganizationRoles);
      const changes: ConnectionChanges = { organizationId, defaultOrganizationRoles: roles, updatedAt: new Date() };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.providerPerformsMfa !== undefined) changes.providerPerformsMfa = patch.providerPerformsMfa;
      if (provider) Object.assign(changes, { samlIdpEntityId: provider.entityId, samlSsoUrl: provider.ssoUrl, samlCertificates: provider.certificates });
      await updateConnection(tx, tenant.id, id, changes);
      if (domains) await this.setDomains(tx, tenant.id, id, domains);
      await this.audit.record(tx, {
        tenantId: tenant.id, action: 'SsoConnectionUpdated', actor: { type: 'user', id: by.userId }, target: { type: 'sso_connection', id }, meta,
        details: {
          changed: Object.keys(patch).filter((key) => key !== 'tenantSlug').sort(),
          ...(domains ? { domains } : {}), ...(provider ? { idpEntityId: provider.entityId, ssoUrl: provider.ssoUrl, certificatesReplaced: true } : {}),
        },
      });
      return { name: changes.name ?? current.name, domains: domains ?? current.domains, provider: provider?.entityId ?? current.samlIdpEntityId };
    });
    await this.notices.notifyAdmins(em, tenant, { kind: 'updated', ...updated, changedBy });
    return this.get(em, tenant, id);
  }

  /**
   * Deletes a connection; its people keep their accounts (and their provider links, for when a
   * connection to the same provider comes back), and sign-ins in progress through it fail.
   * @throws ApiError 401 `reauthentication_required`, 404 `not_found`.
   */
  async delete(em: EntityManager, tenant: Tenant, id: string, by: ConnectionChanger, meta: RequestMeta): Promise<void> {
    const changedBy = await this.assertMayChange(em, tenant, by);
    const removed = await em.transactional(async (tx) => {
      const current = await this.find(tx, tenant.id, id);
      await deleteConnection(tx, tenant.id, id);
      await this.audit.record(tx, {
        tenantId: tenant.id, action: 'SsoConnectionDeleted', actor: { type: 'user', id: by.userId }, target: { type: 'sso_connection', id }, meta,
        details: { name: current.name, domains: current.domains, idpEntityId: current.samlIdpEntityId },
      });
      return current;
    });
    await this.notices.notifyAdmins(em, tenant, { kind: 'deleted', name: removed.name, domains: removed.domains, provider: removed.samlIdpEntityId, changedBy });
  }

  /** The API view of a stored connection. */
  view(tenant: Tenant, connection: SsoConnectionWithDomains): SsoConnectionView {
    return {
      id: connection.id, name: connection.name, protocol: connection.protocol, domains: connection.domains, organizationId: connection.organizationId,
      defaultOrganizationRoles: connection.defaultOrganizationRoles, providerPerformsMfa: connection.providerPerformsMfa,
      saml: { idpEntityId: connection.samlIdpEntityId, ssoUrl: connection.samlSsoUrl, certificates: connection.samlCertificates.map(certificateView) },
      sp: this.serviceProvider(tenant, connection.id), createdAt: connection.createdAt, updatedAt: connection.updatedAt,
    };
  }

  /**
   * Whoever controls a connection decides who signs in for its domains: only a signed-in Admin with
   * a recent sign-in (docs/mfa.md "Recent sign-in"); the router already refused API keys.
   * @returns the Admin's email, for the notice.
   */
  private async assertMayChange(em: EntityManager, tenant: Tenant, by: ConnectionChanger): Promise<string> {
    await assertRecentSignIn(em, tenant, by, 'change single sign-on connections');
    return (await findUserEmail(em, tenant.id, by.userId)) ?? 'an administrator';
  }

  private providerSettings(input: SamlProviderInput): IdentityProviderSettings {
    const settings = 'metadataXml' in input
      ? parseIdentityProviderMetadata(input.metadataXml)
      : { entityId: input.entityId.trim(), ssoUrl: input.ssoUrl.trim(), certificates: [normalizeCertificate(input.certificate)] };
    if (!isAllowedSsoUrl(settings.ssoUrl)) throw SSO_ERRORS.invalidSsoUrl();
    return settings;
  }

  /** Checks the organization and its role names inside the transaction. @returns the role names, deduplicated. */
  private async checkOrganization(tx: EntityManager, tenantId: string, organizationId: string | null, roleNames: string[]): Promise<string[]> {
    if (organizationId === null) return [];
    if (!(await findOrganization(tx, tenantId, organizationId))) throw ORGANIZATION_ERRORS.organizationNotFound();
    return (await this.organizationRoles.resolve(tx, tenantId, roleNames)).map((role) => role.name).sort();
  }

  private async setDomains(tx: EntityManager, tenantId: string, connectionId: string, domains: string[]): Promise<void> {
    const owner = await findDomainOwner(tx, tenantId, domains, connectionId);
    if (owner) throw SSO_ERRORS.domainTaken({ domain: owner.domain });
    try {
      await replaceConnectionDomains(tx, tenantId, connectionId, domains);
    } catch (err) {
      // another change took the domain in between
      if (isUniqueViolation(err)) throw SSO_ERRORS.domainTaken({ domain: domains.join(', ') });
      throw err;
    }
  }
}

/** Lower-cased, deduplicated, sorted domain names. */
function normalizeDomains(domains: readonly string[]): string[] {
  return [...new Set(domains.map((domain) => domain.trim().toLowerCase()))].sort();
}

/** An https URL, or http on a loopback host (development, tests). */
function isAllowedSsoUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname));
  } catch {
    return false;
  }
}

function certificateView(pem: string): CertificateView {
  const certificate = new X509Certificate(pem);
  return { pem, subject: certificate.subject, notAfter: new Date(certificate.validTo), fingerprintSha256: certificate.fingerprint256 };
}
