import { randomUUID, X509Certificate } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { SsoConnection, SsoProtocol } from '../../entities/sso.js';
import type { Tenant } from '../../entities/tenant.js';
import { isUniqueViolation, REQUEST_ERRORS } from '../../lib/errors.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import type { AuditService } from '../audit/audit-service.js';
import { IDP_ERRORS, IDP_REASONS } from '../../errors/idp.js';
import { issuerProblem } from '../idp/idp-outbound.js';
import type { IdpClientCredentials, IdpProviderClient } from '../idp/idp-provider-client.js';
import { findLatestEventsAboutTarget } from '../../queries/audit-event.js';
import { assertRecentSignIn } from '../mfa/mfa-enrollment-service.js';
import { ORGANIZATION_ERRORS } from '../../errors/organization.js';
import { findOrganization } from '../../queries/organization.js';
import type { OrganizationRoleService } from '../organizations/organization-role-service.js';
import { findUserEmail } from '../../queries/user.js';
import { fetchIdentityProviderMetadata } from './saml-metadata-fetch.js';
import { generateServiceProviderKey } from './saml-sp-key.js';
import { normalizeCertificate, parseIdentityProviderMetadata, type IdentityProviderSettings } from './saml-xml.js';
import type { SsoConnectionNotifier } from './sso-connection-notice.js';
import {
  deleteConnection, findConnection, findConnections, findDomainOwner, hasConnections, insertConnection, replaceConnectionDomains, updateConnection,
  type ConnectionChanges, type SsoConnectionWithDomains,
} from '../../queries/sso-connection.js';
import { SSO_ERRORS } from '../../errors/sso.js';

/** The identity provider of a SAML connection: its metadata XML, the URL to download it from, or its three values typed in. */
export type SamlProviderInput = { metadataXml: string } | { metadataUrl: string } | { entityId: string; ssoUrl: string; certificate: string };

/** The identity provider of an OpenID Connect connection: its issuer and the client registered there. */
export interface OidcProviderInput {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** The fields every connection has (docs/sso.md "Connections"). */
interface ConnectionFields {
  name: string;
  /** Email domains, lower-case; each belongs to one connection of the tenant. */
  domains: string[];
  organizationId?: string | null | undefined;
  defaultOrganizationRoles?: string[] | undefined;
  providerPerformsMfa?: boolean | undefined;
  /** SAML: sign AuthnRequests with the connection's SP key (some IdPs, e.g. ADFS, can require it). */
  signAuthnRequests?: boolean | undefined;
}

/** `POST sso-connections`: a SAML connection with `saml`, or an OpenID Connect one with `oidc`. */
export type SsoConnectionInput = ConnectionFields & ({ protocol: 'saml'; saml: SamlProviderInput } | { protocol: 'oidc'; oidc: OidcProviderInput });

/**
 * `PATCH sso-connections/{id}`: any field but the protocol; `saml` only on a SAML connection, `oidc`
 * only on an OpenID Connect one (its `clientSecret` may be left out to keep the stored one).
 */
export type SsoConnectionPatch = Partial<ConnectionFields> & {
  saml?: SamlProviderInput | undefined;
  oidc?: (Omit<OidcProviderInput, 'clientSecret'> & { clientSecret?: string | undefined }) | undefined;
};

/**
 * The Admin changing a connection: a signed-in user and the session it uses (checked for a recent
 * sign-in, and named in the Admins' notice); the same person as the request scope's actor.
 */
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

/** The values of a SAML connection to enter at the identity provider. */
export interface SamlServiceProvider {
  entityId: string;
  acsUrl: string;
  metadataUrl: string;
}

/** A SAML connection's SP values with its certificate (for IdPs that verify signed requests or encrypt assertions). */
export interface SamlServiceProviderView extends SamlServiceProvider {
  certificate: string;
  signAuthnRequests: boolean;
}

/** A connection as the API shows it, with the values to enter at the identity provider (`sp`); never a secret. */
export interface SsoConnectionView {
  id: string;
  name: string;
  protocol: SsoProtocol;
  domains: string[];
  organizationId: string | null;
  defaultOrganizationRoles: string[];
  providerPerformsMfa: boolean;
  saml: { idpEntityId: string; ssoUrl: string; metadataUrl: string | null; certificates: CertificateView[] } | null;
  oidc: { issuer: string; clientId: string } | null;
  sp: SamlServiceProviderView | { redirectUri: string };
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The tenant's enterprise single sign-on connections (docs/sso.md "Connections"): create, list,
 * read, change, delete. Every change needs an Admin who signed in less than 10 minutes ago (never an
 * API key), is audited with the request scope's actor and metadata (`SsoConnectionCreated` / `Updated`
 * / `Deleted`) and mailed to the other Admins.
 */
export class SsoConnectionService {
  constructor(
    private readonly config: Config,
    private readonly keyring: Keyring,
    private readonly provider: IdpProviderClient,
    private readonly organizationRoles: OrganizationRoleService,
    private readonly audit: AuditService,
    private readonly notices: SsoConnectionNotifier,
  ) {}

  /** The service-provider values of a SAML connection (SAML 2.0 Metadata §2.4.4): entity id = metadata URL, HTTP-POST ACS. */
  serviceProvider(tenant: Tenant, connectionId: string): SamlServiceProvider {
    const base = `${this.config.publicUrl}/v1/${encodeURIComponent(tenant.slug)}/sso/${connectionId}/saml`;
    return { entityId: `${base}/metadata`, acsUrl: `${base}/acs`, metadataUrl: `${base}/metadata` };
  }

  /** The redirect URI of an OpenID Connect connection, to register at its provider (RFC 6749 §3.1.2). */
  redirectUri(tenant: Tenant, connectionId: string): string {
    return `${this.config.publicUrl}/v1/${encodeURIComponent(tenant.slug)}/sso/${connectionId}/oidc/callback`;
  }

  /** The decrypted SP private key (PKCS #8 PEM) of a SAML connection. */
  serviceProviderKey(connection: SsoConnection): string {
    if (connection.spPrivateKeyEnc === null) throw new Error('not a SAML connection');
    return this.keyring.decrypt(connection.spPrivateKeyEnc, ssoSpKeyAssociatedData(connection.tenantId, connection.id));
  }

  /** A new SP key pair of a SAML connection, the private key encrypted (docs/sso.md "Signed requests and encrypted assertions"). */
  private async newServiceProviderKey(tenant: Tenant, connectionId: string): Promise<Pick<SsoConnection, 'spPrivateKeyEnc' | 'spCertificate'>> {
    const key = await generateServiceProviderKey(`${new URL(this.config.publicUrl).hostname} SSO ${connectionId}`);
    return { spPrivateKeyEnc: this.keyring.encrypt(key.privateKeyPem, ssoSpKeyAssociatedData(tenant.id, connectionId)), spCertificate: key.certificatePem };
  }

  /** The decrypted client credentials of an OpenID Connect connection. */
  clientCredentials(connection: SsoConnection): IdpClientCredentials {
    if (connection.oidcClientId === null || connection.oidcClientSecretEnc === null) throw new Error('not an OpenID Connect connection');
    return {
      clientId: connection.oidcClientId,
      clientSecret: this.keyring.decrypt(connection.oidcClientSecretEnc, ssoClientSecretAssociatedData(connection.tenantId, connection.id)),
    };
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
  async create(scope: RequestScope, input: SsoConnectionInput, by: ConnectionChanger): Promise<SsoConnectionView> {
    const { em, tenant } = scope;
    const changedBy = await this.assertMayChange(em, tenant, by);
    const id = randomUUID();
    const provider = input.protocol === 'saml'
      ? { ...(await this.samlColumns(input.saml)), ...(await this.newServiceProviderKey(tenant, id)) }
      : await this.oidcColumns(tenant.id, id, input.oidc);
    const domains = normalizeDomains(input.domains);
    const now = new Date();
    await em.transactional(async (tx) => {
      const roles = await this.checkOrganization(tx, tenant.id, input.organizationId ?? null, input.defaultOrganizationRoles ?? []);
      await insertConnection(tx, {
        id, tenantId: tenant.id, name: input.name, protocol: input.protocol, organizationId: input.organizationId ?? null, defaultOrganizationRoles: roles,
        providerPerformsMfa: input.providerPerformsMfa ?? false, signAuthnRequests: input.signAuthnRequests ?? false, ...NO_PROVIDER, ...provider,
        createdAt: now, updatedAt: now,
      });
      await this.setDomains(tx, tenant.id, id, domains);
      await this.audit.record(withEm(scope, tx), {
        action: 'SsoConnectionCreated', target: { type: 'sso_connection', id },
        details: { name: input.name, protocol: input.protocol, domains, provider: providerName(provider), organizationId: input.organizationId ?? null },
      });
      await this.notices.notifyAdmins(tx, tenant, { kind: 'created', name: input.name, domains, provider: providerName(provider), changedBy });
    });
    return this.get(em, tenant, id);
  }

  /**
   * Changes a connection: any field given replaces the stored one (`saml` replaces all three
   * provider values; `organizationId: null` detaches the organization).
   * @throws as {@link create}, and 404 `not_found`.
   */
  async update(scope: RequestScope, id: string, patch: SsoConnectionPatch, by: ConnectionChanger): Promise<SsoConnectionView> {
    const { em, tenant } = scope;
    const changedBy = await this.assertMayChange(em, tenant, by);
    const stored = await this.find(em, tenant.id, id);
    if ((patch.saml && stored.protocol !== 'saml') || (patch.oidc && stored.protocol !== 'oidc')) throw SSO_ERRORS.protocolMismatch({ protocol: stored.protocol });
    const provider = patch.saml
      ? await this.samlColumns(patch.saml)
      : patch.oidc
        ? await this.oidcColumns(tenant.id, id, patch.oidc, stored.oidcClientSecretEnc)
        : undefined;
    const domains = patch.domains ? normalizeDomains(patch.domains) : undefined;
    await em.transactional(async (tx) => {
      const current = await this.find(tx, tenant.id, id);
      const organizationId = patch.organizationId === undefined ? current.organizationId : patch.organizationId;
      const roles = await this.checkOrganization(tx, tenant.id, organizationId, patch.defaultOrganizationRoles ?? current.defaultOrganizationRoles);
      const changes: ConnectionChanges = { organizationId, defaultOrganizationRoles: roles, updatedAt: new Date(), ...provider };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.providerPerformsMfa !== undefined) changes.providerPerformsMfa = patch.providerPerformsMfa;
      if (patch.signAuthnRequests !== undefined) changes.signAuthnRequests = patch.signAuthnRequests;
      await updateConnection(tx, tenant.id, id, changes);
      if (domains) await this.setDomains(tx, tenant.id, id, domains);
      await this.audit.record(withEm(scope, tx), {
        action: 'SsoConnectionUpdated', target: { type: 'sso_connection', id },
        details: {
          changed: Object.keys(patch).filter((key) => key !== 'tenantSlug').sort(),
          ...(domains ? { domains } : {}), ...(provider ? { provider: providerName(provider), providerReplaced: true } : {}),
        },
      });
      const updated = { name: changes.name ?? current.name, domains: domains ?? current.domains, provider: provider ? providerName(provider) : providerName(current) };
      await this.notices.notifyAdmins(tx, tenant, { kind: 'updated', ...updated, changedBy });
    });
    return this.get(em, tenant, id);
  }

  /**
   * Deletes a connection; its people keep their accounts (and their provider links, for when a
   * connection to the same provider comes back), and sign-ins in progress through it fail.
   * @throws ApiError 401 `reauthentication_required`, 404 `not_found`.
   */
  async delete(scope: RequestScope, id: string, by: ConnectionChanger): Promise<void> {
    const { em, tenant } = scope;
    const changedBy = await this.assertMayChange(em, tenant, by);
    await em.transactional(async (tx) => {
      const current = await this.find(tx, tenant.id, id);
      await deleteConnection(tx, tenant.id, id);
      await this.audit.record(withEm(scope, tx), {
        action: 'SsoConnectionDeleted', target: { type: 'sso_connection', id },
        details: { name: current.name, domains: current.domains, provider: providerName(current) },
      });
      await this.notices.notifyAdmins(tx, tenant, { kind: 'deleted', name: current.name, domains: current.domains, provider: providerName(current), changedBy });
    });
  }

  /** The API view of a stored connection. */
  view(tenant: Tenant, connection: SsoConnectionWithDomains): SsoConnectionView {
    const saml = connection.protocol === 'saml' && connection.samlIdpEntityId !== null && connection.samlSsoUrl !== null
      ? {
        idpEntityId: connection.samlIdpEntityId, ssoUrl: connection.samlSsoUrl, metadataUrl: connection.samlMetadataUrl,
        certificates: (connection.samlCertificates ?? []).map(certificateView),
      }
      : null;
    const oidc = connection.protocol === 'oidc' && connection.oidcIssuer !== null && connection.oidcClientId !== null
      ? { issuer: connection.oidcIssuer, clientId: connection.oidcClientId }
      : null;
    return {
      id: connection.id, name: connection.name, protocol: connection.protocol, domains: connection.domains, organizationId: connection.organizationId,
      defaultOrganizationRoles: connection.defaultOrganizationRoles, providerPerformsMfa: connection.providerPerformsMfa, saml, oidc,
      sp: connection.protocol === 'saml'
        ? { ...this.serviceProvider(tenant, connection.id), certificate: connection.spCertificate ?? '', signAuthnRequests: connection.signAuthnRequests }
        : { redirectUri: this.redirectUri(tenant, connection.id) },
      createdAt: connection.createdAt, updatedAt: connection.updatedAt,
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

  /**
   * The columns of an OpenID Connect provider: the issuer checked as the tenant's own issuer is
   * (docs/idp.md "A provider per tenant": URL rules, then discovery now), the client secret
   * encrypted; a patch without a secret keeps `storedSecretEnc`.
   * @throws ApiError 400 `invalid_issuer`, `idp_issuer_not_allowed`, `idp_discovery_failed`, `issuer_mismatch`.
   */
  private async oidcColumns(
    tenantId: string, connectionId: string, input: { issuer: string; clientId: string; clientSecret?: string | undefined }, storedSecretEnc: string | null = null,
  ): Promise<Pick<SsoConnection, 'oidcIssuer' | 'oidcClientId' | 'oidcClientSecretEnc'>> {
    const problem = issuerProblem(input.issuer, this.config.idpAllowPrivateIssuers);
    if (problem) throw problem.reason === IDP_REASONS.invalidIssuer ? IDP_ERRORS.invalidIssuer({ problem: problem.message }) : IDP_ERRORS.issuerUrlNotAllowed({ problem: problem.message });
    const issuer = await this.provider.verifyIssuer(input.issuer);
    const secretEnc = input.clientSecret === undefined ? storedSecretEnc : this.keyring.encrypt(input.clientSecret, ssoClientSecretAssociatedData(tenantId, connectionId));
    if (secretEnc === null) throw REQUEST_ERRORS.validationFailed({ issues: [{ path: 'oidc.clientSecret', message: 'Required' }] });
    return { oidcIssuer: issuer, oidcClientId: input.clientId, oidcClientSecretEnc: secretEnc };
  }

  /**
   * The columns of a SAML provider: read from its metadata (given, or downloaded now from
   * `metadataUrl` through the outbound guard) or from the three values typed in.
   * @throws ApiError 400 `invalid_saml_metadata`, `invalid_saml_certificate`, `invalid_sso_url`.
   */
  private async samlColumns(input: SamlProviderInput): Promise<Pick<SsoConnection, 'samlIdpEntityId' | 'samlSsoUrl' | 'samlCertificates' | 'samlMetadataUrl'>> {
    let settings: IdentityProviderSettings;
    if ('metadataUrl' in input) settings = parseIdentityProviderMetadata(await fetchIdentityProviderMetadata(input.metadataUrl, this.config.idpAllowPrivateIssuers));
    else if ('metadataXml' in input) settings = parseIdentityProviderMetadata(input.metadataXml);
    else settings = { entityId: input.entityId.trim(), ssoUrl: input.ssoUrl.trim(), certificates: [normalizeCertificate(input.certificate)] };
    if (!isAllowedSsoUrl(settings.ssoUrl)) throw SSO_ERRORS.invalidSsoUrl();
    return {
      samlIdpEntityId: settings.entityId, samlSsoUrl: settings.ssoUrl, samlCertificates: settings.certificates,
      samlMetadataUrl: 'metadataUrl' in input ? input.metadataUrl : null,
    };
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

/** The provider columns of a connection of the other protocol. */
const NO_PROVIDER = {
  samlIdpEntityId: null, samlSsoUrl: null, samlCertificates: null, samlMetadataUrl: null, spPrivateKeyEnc: null, spCertificate: null, oidcIssuer: null, oidcClientId: null, oidcClientSecretEnc: null,
} satisfies Partial<SsoConnection>;

/** What the audit log and the notices call a connection's provider: the SAML entity id or the OpenID issuer. */
function providerName(columns: Partial<Pick<SsoConnection, 'samlIdpEntityId' | 'oidcIssuer'>>): string {
  return columns.samlIdpEntityId ?? columns.oidcIssuer ?? '';
}

/** Associated data binding a SAML connection's encrypted SP private key to it (shared with key rotation). */
export function ssoSpKeyAssociatedData(tenantId: string, connectionId: string): string {
  return `sso-sp-key:${tenantId}:${connectionId}`;
}

/** Associated data binding a connection's encrypted OpenID client secret to it (shared with key rotation). */
export function ssoClientSecretAssociatedData(tenantId: string, connectionId: string): string {
  return `sso-client-secret:${tenantId}:${connectionId}`;
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
