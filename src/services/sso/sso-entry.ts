import type { EntityManager } from '@mikro-orm/postgresql';
import type { SsoRequestPurpose } from '../../entities/sso.js';
import type { Tenant } from '../../entities/tenant.js';
import { normalizeEmail } from '../../lib/email.js';
import type { Keyring } from '../../security/keyring.js';
import { constantTimeEqual, sha256Hex } from '../../security/tokens.js';
import { deleteExpiredSsoRowsEverywhere, spendSsoCompletion } from '../../queries/sso-auth-request.js';
import { readSsoIdentity, type VerifiedSsoIdentity } from './sso-completion.js';
import type { OidcConnectionSignIn } from './oidc-connection-sign-in.js';
import type { SamlService } from './saml-service.js';
import { findConnectionOfDomain, type SsoConnectionWithDomains } from '../../queries/sso-connection.js';
import type { SsoConnectionService } from './sso-connection-service.js';
import { SSO_ERRORS } from '../../errors/sso.js';

/**
 * Where a single sign-on starts (docs/sso.md "Sign-in"): the connection of an address's domain, or
 * the connection an Admin tests, handed to its protocol (SAML or OpenID Connect).
 */
export class SsoEntry {
  constructor(
    private readonly keyring: Keyring,
    private readonly connections: SsoConnectionService,
    private readonly saml: SamlService,
    private readonly oidc: OidcConnectionSignIn,
  ) {}

  /**
   * `POST sso/start`: starts a sign-in at the connection whose domains hold the address's domain.
   * @param browserBinding the random value of the browser's binding cookie.
   * @param returnTo a path of this service to open after the sign-in, or undefined.
   * @returns the identity provider URL to send the browser to.
   * @throws ApiError 404 `sso_connection_not_found`; 400 `idp_unavailable` (an OpenID provider's discovery failed).
   */
  async start(em: EntityManager, tenant: Tenant, email: string, browserBinding: string, returnTo?: string): Promise<string> {
    const address = normalizeEmail(email);
    const connection = await findConnectionOfDomain(em, tenant.id, address.slice(address.lastIndexOf('@') + 1));
    if (!connection) throw SSO_ERRORS.noConnectionForEmail();
    return this.begin(em, tenant, connection, browserBinding, 'sign_in', returnTo);
  }

  /**
   * `POST sso-connections/{id}/test` (docs/sso.md "Testing a connection"): an Admin's sign-in at the
   * connection's provider whose verified answer shows what the provider sent and signs no one in.
   * @returns the identity provider URL to send the browser to.
   * @throws ApiError 404 `not_found`; 400 `idp_unavailable`.
   */
  async startTest(em: EntityManager, tenant: Tenant, connectionId: string, browserBinding: string): Promise<string> {
    return this.begin(em, tenant, await this.connections.find(em, tenant.id, connectionId), browserBinding, 'test');
  }

  /**
   * The result of an Admin's test, whatever the protocol (docs/sso.md "Testing a connection"): spends the completion code
   * of a `test` request, from the browser that started it, and answers the verified identity with
   * every attribute the IdP sent.
   * @throws ApiError 401 `sso_completion_invalid` (unknown, used, expired, or a sign-in's code), 401 `browser_mismatch`.
   */
  async testResult(em: EntityManager, tenant: Tenant, code: string, presentedBinding: string | undefined): Promise<VerifiedSsoIdentity & { connectionId: string }> {
    const spent = await spendSsoCompletion(em, tenant.id, sha256Hex(code), new Date());
    if (!spent || spent.identityEnc === null || spent.purpose !== 'test') throw SSO_ERRORS.completionInvalid();
    if (presentedBinding === undefined || !constantTimeEqual(sha256Hex(presentedBinding), spent.browserBindingHash)) throw SSO_ERRORS.browserMismatch();
    return { ...readSsoIdentity(this.keyring, tenant.id, spent), connectionId: spent.connectionId };
  }

  /** The retention sweep's part: deletes expired SSO requests and assertion ids of every tenant. @returns how many rows went. */
  async sweepExpired(em: EntityManager, now = new Date()): Promise<number> {
    return deleteExpiredSsoRowsEverywhere(em, now);
  }

  private begin(
    em: EntityManager, tenant: Tenant, connection: SsoConnectionWithDomains, browserBinding: string, purpose: SsoRequestPurpose, returnTo?: string,
  ): Promise<string> {
    return connection.protocol === 'saml'
      ? this.saml.begin(em, tenant, connection, browserBinding, purpose, returnTo)
      : this.oidc.begin(em, tenant, connection, browserBinding, purpose, returnTo);
  }
}
