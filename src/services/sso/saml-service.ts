import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CacheProvider, Profile, SAML, SamlStatusError } from '@node-saml/node-saml';
import type { SsoRequestPurpose } from '../../entities/sso.js';
import type { Tenant } from '../../entities/tenant.js';
import { ApiError } from '../../lib/errors.js';
import { emailAddress, normalizeEmail } from '../../lib/email.js';
import type { TenantScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import { randomToken, sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { declaresDoctype, MAX_SAML_XML_BYTES, selectAttribute, selectText } from './saml-xml.js';
import {
  consumeSsoRequest, deleteExpiredSsoRows, findOpenSsoRequestTime, findSsoRequestPurpose, insertSsoAuthRequest, rememberAssertion,
} from '../../queries/sso-auth-request.js';
import type { SsoConnectionWithDomains } from '../../queries/sso-connection.js';
import type { SsoConnectionService } from './sso-connection-service.js';
import { auditRefusal, issueCompletion, type VerifiedSsoIdentity } from './sso-completion.js';
import { SSO_ERRORS } from '../../errors/sso.js';

/** Seconds an AuthnRequest stays answerable (docs/sso.md "Security checks"). */
export const SSO_REQUEST_TTL_SECONDS = 600;
/** Clock skew allowed on the assertion's time conditions, in milliseconds. */
export const SAML_CLOCK_SKEW_MS = 120_000;
/** Seconds an assertion id is remembered when the assertion names no expiry of its own. */
const ASSERTION_ID_FALLBACK_SECONDS = 3_600;

/**
 * node-saml (with xml-crypto, xml-encryption and their XML stack), loaded on the first SAML request:
 * most instances never serve one, and the stack holds about 6 MB of heap (docs/performance.md "What
 * is left"). Node caches the module after the first load.
 */
const nodeSaml = () => import('@node-saml/node-saml');

const EMAIL_NAME_ID = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const TRANSIENT_NAME_ID = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

/**
 * SAML 2.0 Web Browser SSO, service-provider side (SAML 2.0 Profiles §4.1; docs/sso.md), on
 * @node-saml/node-saml: SP metadata, the SP-initiated HTTP-Redirect AuthnRequest, and the HTTP-POST
 * assertion consumer service, which verifies everything and hands a single-use completion code to
 * the browser that started the sign-in.
 */
export class SamlService {
  constructor(
    private readonly keyring: Keyring,
    private readonly connections: SsoConnectionService,
    private readonly audit: AuditService,
  ) {}

  /**
   * The connection's service-provider metadata (SAML 2.0 Metadata §2.4.4): entity id, the HTTP-POST
   * assertion consumer service, signed assertions wanted.
   * @throws ApiError 404 `not_found`.
   */
  async metadata(em: EntityManager, tenant: Tenant, connectionId: string): Promise<string> {
    const connection = await this.connections.find(em, tenant.id, connectionId);
    // the SP certificate twice: for the IdP to encrypt assertions to it and to verify signed requests
    return (await this.client(tenant, connection, NO_REQUESTS)).generateServiceProviderMetadata(connection.spCertificate, connection.spCertificate);
  }

  /**
   * Starts a sign-in (or an Admin's test) at a SAML connection's IdP: an AuthnRequest (HTTP-Redirect
   * binding) whose `ID` is stored with the SHA-256 of the browser's binding value, answerable for
   * {@link SSO_REQUEST_TTL_SECONDS}.
   * @returns the IdP URL to send the browser to.
   */
  async begin(
    em: EntityManager, tenant: Tenant, connection: SsoConnectionWithDomains, browserBinding: string, purpose: SsoRequestPurpose, returnTo?: string,
  ): Promise<string> {
    let requestId: string | undefined;
    const capture: CacheProvider = {
      saveAsync: async (key, value) => {
        requestId = key;
        return { value, createdAt: Date.now() };
      },
      getAsync: async () => null,
      removeAsync: async () => null,
    };
    const url = await (await this.client(tenant, connection, capture)).getAuthorizeUrlAsync('', undefined, {});
    if (requestId === undefined) throw new Error('node-saml produced no AuthnRequest ID');
    const now = new Date();
    await deleteExpiredSsoRows(em, tenant.id, now);
    await insertSsoAuthRequest(em, {
      id: randomUUID(), tenantId: tenant.id, connectionId: connection.id, requestId, browserBindingHash: sha256Hex(browserBinding), purpose,
      returnTo: returnTo ?? null, createdAt: now, expiresAt: new Date(now.getTime() + SSO_REQUEST_TTL_SECONDS * 1000),
      consumedAt: null, completionHash: null, identityEnc: null, completionExpiresAt: null, completedAt: null, secretsEnc: null,
    });
    return url;
  }

  /**
   * The assertion consumer service (HTTP-POST binding): accepts `SAMLResponse` only when its
   * signature (response or assertion) verifies with the connection's certificates, `InResponseTo`
   * names an open request of this connection (response and assertion alike), the audience is the SP
   * entity id, `Destination` and `Recipient` are the ACS URL, the time conditions hold (2 minutes of
   * skew), the assertion id was never accepted before, and the address is of the connection's
   * domains. The request is answered once, accepted or not. A refusal is audited `UserLoginFailed`.
   * @returns the single-use completion code (valid {@link SSO_COMPLETION_TTL_SECONDS}) for the browser,
   *   and the request's purpose (a sign-in, or an Admin's test).
   * @throws ApiError 404 `not_found` (connection), 401 `saml_response_invalid`, `saml_signature_invalid`,
   *   `sso_request_unknown`, `saml_audience_mismatch`, `saml_recipient_mismatch`, `saml_assertion_expired`,
   *   `saml_assertion_replayed`, `saml_idp_error`, `sso_email_missing`, `sso_email_domain_mismatch`.
   */
  async consumeResponse(scope: TenantScope, connectionId: string, samlResponse: string): Promise<{ code: string; purpose: SsoRequestPurpose }> {
    const { em, tenant } = scope;
    const connection = await this.connections.find(em, tenant.id, connectionId);
    try {
      return await this.acceptResponse(em, tenant, connection, samlResponse);
    } catch (err) {
      await auditRefusal(this.audit, scope, connection.id, err);
      throw err;
    }
  }

  /**
   * Whether a (refused) response names a test request of the connection, so the ACS shows the
   * refusal on the console's page rather than the sign-in page. False for anything unreadable.
   */
  async isTestRequestOf(em: EntityManager, tenant: Tenant, connectionId: string, samlResponse: string): Promise<boolean> {
    try {
      const requestId = selectAttribute(decodeResponse(samlResponse), "/*[local-name()='Response']/@InResponseTo");
      return requestId !== undefined && (await findSsoRequestPurpose(em, tenant.id, connectionId, requestId)) === 'test';
    } catch {
      return false;
    }
  }

  private async acceptResponse(
    em: EntityManager, tenant: Tenant, connection: SsoConnectionWithDomains, samlResponse: string,
  ): Promise<{ code: string; purpose: SsoRequestPurpose }> {
    const xml = decodeResponse(samlResponse);
    const requestId = selectAttribute(xml, "/*[local-name()='Response']/@InResponseTo");
    if (!requestId) throw SSO_ERRORS.requestUnknown();
    const now = new Date();
    const openRequests: CacheProvider = {
      saveAsync: async () => null,
      // node-saml reads the value as the time the request was sent
      getAsync: async (key) => (key === requestId ? ((await findOpenSsoRequestTime(em, tenant.id, connection.id, key, now))?.toISOString() ?? null) : null),
      removeAsync: async () => null,
    };
    let profile: Profile | null;
    try {
      ({ profile } = await (await this.client(tenant, connection, openRequests)).validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (err) {
      await consumeSsoRequest(em, tenant.id, connection.id, requestId, now);
      throw refusalOf(err, (await nodeSaml()).SamlStatusError);
    }
    const request = await consumeSsoRequest(em, tenant.id, connection.id, requestId, now);
    if (!request) throw SSO_ERRORS.requestUnknown();
    if (!profile) throw SSO_ERRORS.responseInvalid({ problem: 'it carries no assertion' });
    const identity = this.checkAssertion(tenant, connection, xml, requestId, profile);
    const expiresAt = assertionExpiry(profile, now);
    if (!(await rememberAssertion(em, tenant.id, connection.id, identity.assertionId, expiresAt))) throw SSO_ERRORS.assertionReplayed();
    return { code: await issueCompletion(em, this.keyring, tenant.id, request.id, identity.verified, now), purpose: request.purpose };
  }

  /** The checks node-saml leaves to the service provider, on the verified assertion. */
  private checkAssertion(
    tenant: Tenant, connection: SsoConnectionWithDomains, responseXml: string, requestId: string, profile: Profile,
  ): { assertionId: string; verified: VerifiedSsoIdentity } {
    const { acsUrl } = this.connections.serviceProvider(tenant, connection.id);
    const assertionXml = profile.getAssertionXml?.() ?? '';
    const destination = selectAttribute(responseXml, "/*[local-name()='Response']/@Destination");
    if (destination !== undefined && destination !== acsUrl) throw SSO_ERRORS.recipientMismatch();
    const confirmation = "/*[local-name()='Assertion']/*[local-name()='Subject']/*[local-name()='SubjectConfirmation']/*[local-name()='SubjectConfirmationData']";
    if (selectAttribute(assertionXml, `${confirmation}/@Recipient`) !== acsUrl) throw SSO_ERRORS.recipientMismatch();
    // the signed assertion itself must answer this request (Profiles §4.1.4.2), not only the envelope
    if (selectAttribute(assertionXml, `${confirmation}/@InResponseTo`) !== requestId) throw SSO_ERRORS.requestUnknown();
    if (profile.issuer !== connection.samlIdpEntityId) throw SSO_ERRORS.signatureInvalid();
    const assertionId = selectAttribute(assertionXml, "/*[local-name()='Assertion']/@ID");
    if (!assertionId) throw SSO_ERRORS.responseInvalid({ problem: 'the assertion has no ID' });
    const email = emailOf(profile);
    if (!email) throw SSO_ERRORS.emailMissing();
    if (!connection.domains.includes(email.slice(email.lastIndexOf('@') + 1))) throw SSO_ERRORS.emailDomainMismatch();
    const subject = profile.nameIDFormat === TRANSIENT_NAME_ID || !profile.nameID ? email : profile.nameID;
    const name = firstString(profile['name'] ?? profile['displayName'] ?? profile['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name']);
    const authnContext = selectText(assertionXml, "//*[local-name()='AuthnContextClassRef']")?.slice(0, 512) ?? null;
    return {
      assertionId,
      verified: {
        issuer: connection.samlIdpEntityId!, subject: subject.slice(0, 255), email, name: name?.slice(0, 200) ?? null, authnContext, attributes: attributesOf(profile),
        providerMfa: false,
      },
    };
  }

  /** A node-saml client for one connection (its SP values, certificates and open requests). */
  private async client(tenant: Tenant, connection: SsoConnectionWithDomains, requests: CacheProvider): Promise<SAML> {
    const { SAML, ValidateInResponseTo } = await nodeSaml();
    const sp = this.connections.serviceProvider(tenant, connection.id);
    if (connection.protocol !== 'saml' || connection.samlSsoUrl === null || connection.samlCertificates === null || connection.samlIdpEntityId === null) {
      throw SSO_ERRORS.connectionNotFound();
    }
    const spKey = this.connections.serviceProviderKey(connection);
    return new SAML({
      ...(connection.signAuthnRequests ? { privateKey: spKey } : {}),
      decryptionPvk: spKey,
      entryPoint: connection.samlSsoUrl,
      issuer: sp.entityId,
      callbackUrl: sp.acsUrl,
      audience: sp.entityId,
      idpCert: connection.samlCertificates,
      idpIssuer: connection.samlIdpEntityId,
      wantAssertionsSigned: false,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: SSO_REQUEST_TTL_SECONDS * 1000,
      cacheProvider: requests,
      identifierFormat: null,
      disableRequestedAuthnContext: true,
      signatureAlgorithm: 'sha256',
      generateUniqueId: () => `_${randomToken(20)}`,
    });
  }
}

/** A cache provider for clients that neither send nor answer requests (metadata). */
const NO_REQUESTS: CacheProvider = { saveAsync: async () => null, getAsync: async () => null, removeAsync: async () => null };

/** The response XML, refused when too large, not base64, or declaring a DTD (XXE, entity expansion). */
function decodeResponse(samlResponse: string): string {
  if (samlResponse.length > (MAX_SAML_XML_BYTES * 4) / 3 + 4) throw SSO_ERRORS.responseInvalid({ problem: `larger than ${MAX_SAML_XML_BYTES} bytes` });
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  if (!xml.trimStart().startsWith('<')) throw SSO_ERRORS.responseInvalid({ problem: 'it is not base64-encoded XML' });
  if (declaresDoctype(xml)) throw SSO_ERRORS.responseInvalid({ problem: 'it declares a DTD or an entity' });
  return xml;
}

/** Maps a node-saml refusal to the reason the API and the audit log give. */
function refusalOf(err: unknown, statusError: typeof SamlStatusError): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof statusError) return SSO_ERRORS.providerError({ status: err.message });
  const message = err instanceof Error ? err.message : String(err);
  if (/InResponseTo/i.test(message)) return SSO_ERRORS.requestUnknown();
  if (/signature|Unknown SAML issuer|Missing SAML issuer/i.test(message)) return SSO_ERRORS.signatureInvalid();
  if (/audience/i.test(message)) return SSO_ERRORS.audienceMismatch();
  // node-saml reports a SubjectConfirmationData outside its time window as "no valid subject confirmation"
  if (/expired|not yet valid|No valid subject confirmation/i.test(message)) return SSO_ERRORS.assertionExpired();
  return SSO_ERRORS.responseInvalid({ problem: message.slice(0, 200) });
}

/** The address the assertion names: an emailAddress NameID, else the `email` / `mail` attribute; lower-cased and valid, or null. */
function emailOf(profile: Profile): string | null {
  const candidates = [profile.nameIDFormat === EMAIL_NAME_ID ? profile.nameID : undefined, firstString(profile.email), firstString(profile.mail)];
  for (const candidate of candidates) {
    if (!candidate) continue;
    const email = normalizeEmail(candidate);
    if (emailAddress.safeParse(email).success) return email;
  }
  return null;
}

/** The assertion's attributes as strings: at most 50 names, 20 values each, 512 characters per value. */
function attributesOf(profile: Profile): Record<string, string[]> {
  const attributes: Record<string, string[]> = {};
  const raw = (profile.attributes ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(raw).slice(0, 50)) {
    const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
    attributes[name.slice(0, 256)] = values.slice(0, 20).map((v) => v.slice(0, 512));
  }
  return attributes;
}

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** When the assertion stops being acceptable (its SubjectConfirmationData or Conditions `NotOnOrAfter`), plus the skew. */
function assertionExpiry(profile: Profile, now: Date): Date {
  const xml = profile.getAssertionXml?.() ?? '';
  const notOnOrAfter = selectAttribute(xml, "//*[local-name()='SubjectConfirmationData']/@NotOnOrAfter")
    ?? selectAttribute(xml, "/*[local-name()='Assertion']/*[local-name()='Conditions']/@NotOnOrAfter");
  const at = notOnOrAfter ? Date.parse(notOnOrAfter) : Number.NaN;
  return new Date((Number.isFinite(at) ? at : now.getTime() + ASSERTION_ID_FALLBACK_SECONDS * 1000) + SAML_CLOCK_SKEW_MS);
}
