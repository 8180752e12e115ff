import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import { randomBase62 } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { OIDC_ERRORS } from '../../errors/oidc.js';
import {
  APPLICATION_TYPES, deleteApplicationAndPayloads, findApplication, findApplicationByClientId, findApplicationsOfTenant,
  insertApplication, setClientSecret, updateApplication, type ApplicationType, type OidcApplicationRow,
} from '../../queries/oidc-application.js';

export { APPLICATION_TYPES, type ApplicationType };

/** An application as the API shows it; never its secret. */
export interface Application {
  id: string;
  name: string;
  type: ApplicationType;
  clientId: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  createdAt: Date;
}

/** The client metadata oidc-provider registers for an application (OpenID Connect Dynamic Client Registration 1.0 §2 names). */
export interface ClientMetadata {
  client_id: string;
  client_secret?: string;
  client_name: string;
  application_type: 'web' | 'native';
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'none';
  grant_types: string[];
  response_types: string[];
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
}

/** Base62 characters of a client secret: 43 × log2(62) ≈ 256 bits of randomness (docs/oidc.md). */
const CLIENT_SECRET_CHARS = 43;

/** An application row as the API shows it (no secret). */
export function toApplication(row: OidcApplicationRow): Application {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    clientId: row.clientId,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    createdAt: new Date(row.createdAt),
  };
}

const isConfidential = (type: ApplicationType): boolean => type === 'web' || type === 'm2m';

/** The keyring's associated data of an application's client secret. */
export const applicationSecretAad = (applicationId: string): string => `oidc-client-secret:${applicationId}`;
const secretAad = applicationSecretAad;

/**
 * Why a redirect URI may not be registered for this type, or undefined when it may: an absolute
 * URL without fragment, `https://`, `http://` on a loopback host (RFC 8252 §7.3), or, for native
 * applications only, a private-use scheme (RFC 8252 §7.1, a reverse domain name such as
 * `com.example.app:/callback`). Matched exactly at sign-in.
 */
export function redirectUriProblem(raw: string, type: ApplicationType): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    const host = url.hostname;
    return host === 'localhost' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host) ? undefined : 'http:// is allowed on a loopback host only';
  }
  if (type === 'native' && /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return undefined;
  return type === 'native' ? 'must be https://, http:// on a loopback host, or a private-use scheme (reverse domain name)' : 'must be https:// (or http:// on a loopback host)';
}

/**
 * The registered URIs, each http(s) one with an empty path also in its other spelling
 * (`https://app.example.com` and `https://app.example.com/` are one URL, RFC 3986 §6.2.3), so a
 * relying party that sends its base URL without the slash it was registered with (or with one) is
 * matched; every other URI stays matched exactly.
 */
export function withEmptyPathForms(uris: string[]): string[] {
  const forms = new Set(uris);
  for (const uri of uris) {
    if (!URL.canParse(uri)) continue;
    const url = new URL(uri);
    if (!/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search) continue;
    forms.add(`${url.origin}/`);
    forms.add(url.origin);
  }
  return [...forms];
}

/** The changeable fields of an application. */
export interface ApplicationChanges {
  name?: string;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
}

/**
 * A tenant's applications: the clients of its OpenID Provider (docs/oidc.md "Applications"). Client
 * secrets are 256 random bits, shown once and stored encrypted under the keyring. Every query is
 * scoped by tenant; another tenant's id answers 404. The providers read a client from this table on
 * every use (oidc-provider caches it by the hash of its metadata), so a change applies at once.
 * Its changes take the request's scope first (RequestScope: the workspace, the actor, the metadata)
 * and are audited with it.
 */
export class ApplicationService {
  constructor(
    private readonly keyring: Keyring,
    private readonly audit: AuditService,
  ) {}

  /**
   * Registers an application; `web` and `m2m` get a client secret, answered once.
   * @throws ApiError 400 `invalid_redirect_uri` (with `details.uri`).
   */
  async create(
    scope: RequestScope, input: { name: string; type: ApplicationType; redirectUris?: string[]; postLogoutRedirectUris?: string[] },
  ): Promise<{ application: Application; clientSecret?: string }> {
    const { em, tenant } = scope;
    const redirectUris = input.type === 'm2m' ? [] : this.checkedUris(input.redirectUris ?? [], input.type);
    const postLogoutRedirectUris = input.type === 'm2m' ? [] : this.checkedUris(input.postLogoutRedirectUris ?? [], input.type);
    const id = randomUUID();
    const clientId = `app_${randomBase62(24)}`;
    const clientSecret = isConfidential(input.type) ? `cs_${randomBase62(CLIENT_SECRET_CHARS)}` : undefined;
    const now = new Date();
    return em.transactional(async (tx) => {
      const application = toApplication(await insertApplication(tx, {
        id, tenantId: tenant.id, name: input.name, type: input.type, clientId,
        clientSecretEnc: clientSecret ? this.keyring.encrypt(clientSecret, secretAad(id)) : null, redirectUris, postLogoutRedirectUris, createdAt: now,
      }));
      await this.audit.record(withEm(scope, tx), {
        action: 'ApplicationCreated', target: { type: 'application', id },
        details: { name: input.name, type: input.type, clientId, redirectUris },
      });
      return { application, ...(clientSecret ? { clientSecret } : {}) };
    });
  }

  /** The tenant's applications, oldest first. */
  async list(em: EntityManager, tenantId: string): Promise<Application[]> {
    return (await findApplicationsOfTenant(em, tenantId)).map(toApplication);
  }

  /** @throws ApiError 404 `not_found` when the tenant has no application with this id. */
  async get(em: EntityManager, tenantId: string, id: string): Promise<Application> {
    return toApplication(await this.row(em, tenantId, id));
  }

  /**
   * Changes the name or the redirect URIs (each list replaced whole).
   * @throws ApiError 404 `not_found`, 400 `invalid_redirect_uri`.
   */
  async update(scope: RequestScope, id: string, changes: ApplicationChanges): Promise<Application> {
    const { em, tenant } = scope;
    return em.transactional(async (tx) => {
      const row = await this.row(tx, tenant.id, id, true);
      const current = toApplication(row);
      const redirectUris = changes.redirectUris && row.type !== 'm2m' ? this.checkedUris(changes.redirectUris, row.type) : current.redirectUris;
      const postLogout = changes.postLogoutRedirectUris && row.type !== 'm2m' ? this.checkedUris(changes.postLogoutRedirectUris, row.type) : current.postLogoutRedirectUris;
      const updated = await updateApplication(
        tx, tenant.id, id, { name: changes.name ?? row.name, redirectUris, postLogoutRedirectUris: postLogout }, new Date(),
      );
      await this.audit.record(withEm(scope, tx), {
        action: 'ApplicationUpdated', target: { type: 'application', id },
        details: { clientId: row.clientId, changed: Object.keys(changes) },
      });
      return toApplication(updated);
    });
  }

  /**
   * Deletes an application: its grants, codes and tokens end at once (removed from the provider's
   * storage in the same transaction), its client id is unknown from then on.
   * @throws ApiError 404 `not_found`.
   */
  async delete(scope: RequestScope, id: string): Promise<void> {
    const { em, tenant } = scope;
    await em.transactional(async (tx) => {
      const row = await this.row(tx, tenant.id, id, true);
      await deleteApplicationAndPayloads(tx, tenant.id, id, row.clientId);
      await this.audit.record(withEm(scope, tx), {
        action: 'ApplicationDeleted', target: { type: 'application', id },
        details: { name: row.name, clientId: row.clientId },
      });
    });
  }

  /**
   * A new client secret for a confidential application (answered once); the old one stops working
   * at once.
   * @throws ApiError 404 `not_found`, 409 `application_has_no_secret` for `spa` and `native`.
   */
  async rotateSecret(scope: RequestScope, id: string): Promise<string> {
    const { em, tenant } = scope;
    return em.transactional(async (tx) => {
      const row = await this.row(tx, tenant.id, id, true);
      if (!isConfidential(row.type)) throw OIDC_ERRORS.noClientSecret();
      const clientSecret = `cs_${randomBase62(CLIENT_SECRET_CHARS)}`;
      await setClientSecret(tx, tenant.id, id, this.keyring.encrypt(clientSecret, secretAad(id)), new Date());
      await this.audit.record(withEm(scope, tx), {
        action: 'ApplicationSecretRotated', target: { type: 'application', id },
        details: { clientId: row.clientId },
      });
      return clientSecret;
    });
  }

  /**
   * The client metadata of a client id of this tenant for oidc-provider, secret decrypted, or
   * undefined when the tenant has no such application (a client of another tenant is unknown here).
   */
  async clientMetadata(em: EntityManager, tenantId: string, clientId: string): Promise<ClientMetadata | undefined> {
    const row = await findApplicationByClientId(em, tenantId, clientId);
    if (!row) return undefined;
    const app = toApplication(row);
    const base = { client_id: row.clientId, client_name: row.name, post_logout_redirect_uris: withEmptyPathForms(app.postLogoutRedirectUris) };
    switch (row.type) {
      case 'm2m':
        return {
          ...base, client_secret: this.keyring.decrypt(row.clientSecretEnc!, secretAad(row.id)), application_type: 'web',
          token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'], response_types: [], redirect_uris: [],
        };
      case 'web':
        return {
          ...base, client_secret: this.keyring.decrypt(row.clientSecretEnc!, secretAad(row.id)), application_type: 'web',
          // `id_token` (with response_mode=form_post only): what express-openid-connect and ASP.NET Core default to
          token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token', 'implicit'], response_types: ['code', 'id_token'],
          redirect_uris: app.redirectUris,
        };
      default:
        return {
          ...base, application_type: row.type === 'native' ? 'native' : 'web', token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: app.redirectUris,
        };
    }
  }

  private async row(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<OidcApplicationRow> {
    const row = await findApplication(em, tenantId, id, forUpdate);
    if (!row) throw OIDC_ERRORS.applicationNotFound();
    return row;
  }

  private checkedUris(uris: string[], type: ApplicationType): string[] {
    for (const uri of uris) {
      const problem = redirectUriProblem(uri, type);
      if (problem) throw OIDC_ERRORS.invalidRedirectUri({ uri, problem });
    }
    return [...new Set(uris)];
  }
}
