import type { EntityManager } from '@mikro-orm/postgresql';
import * as payloads from '../../queries/oidc-payload.js';

/** An oidc-provider payload (its own JSON: a token, code, grant, session, interaction, client metadata). */
export type OidcPayload = payloads.OidcPayload;

/** The model oidc-provider stores client metadata under; the applications table answers it, not `oidc_payload`. */
export const CLIENT_MODEL = 'Client';

/**
 * What one tenant's storage needs, given explicitly (nothing is read from a request):
 * - `tenantId`: every statement is scoped by it (docs/architecture.md "Rules");
 * - `em`: a fresh entity manager per statement (the provider calls the adapter outside any request
 *   transaction, e.g. `() => orm.em.fork()`);
 * - `clientMetadata`: the tenant's application of a client id as oidc-provider client metadata, or
 *   undefined (ApplicationService.clientMetadata): the `Client` model is read from the applications
 *   table, so an application exists for the provider as soon as it is registered.
 */
export interface OidcStorageScope {
  tenantId: string;
  em: () => EntityManager;
  clientMetadata: (em: EntityManager, tenantId: string, clientId: string) => Promise<object | undefined>;
}

/**
 * The storage of one tenant's OpenID Provider for one model (oidc-provider 9's `adapter` contract,
 * one instance per model name: `AccessToken`, `RefreshToken`, `AuthorizationCode`, `Grant`,
 * `Session`, `Interaction`, `Client`, …), over the `oidc_payload` query module
 * (src/queries/oidc-payload.ts), one row per (tenant, model, id). docs/oidc.md "Storage".
 *
 * Tenant isolation: every operation names the scope's tenant, so a payload stored through one
 * tenant's adapter is never found, consumed, destroyed or revoked through another's. A payload that
 * expired, or a token of a user no longer live, reads as absent (the query module's rule).
 */
export class OidcStorageAdapter {
  /**
   * @param scope the tenant and what its statements need ({@link OidcStorageScope}).
   * @param model the oidc-provider model this instance stores.
   */
  constructor(
    private readonly scope: OidcStorageScope,
    readonly model: string,
  ) {}

  /**
   * Inserts or replaces the payload `id` of this model.
   * @param expiresIn seconds until the payload expires, as oidc-provider passes it; absent: never.
   */
  async upsert(id: string, payload: OidcPayload, expiresIn?: number): Promise<void> {
    await payloads.upsertPayload(this.scope.em(), this.scope.tenantId, this.model, id, payload, expiresIn);
  }

  /**
   * The payload `id`, with `consumed` (seconds since the epoch) once consumed; undefined when absent,
   * expired or of a user no longer live. For the `Client` model: the tenant's application of that
   * client id as client metadata.
   */
  async find(id: string): Promise<OidcPayload | undefined> {
    const { em, tenantId } = this.scope;
    if (this.model === CLIENT_MODEL) return (await this.scope.clientMetadata(em(), tenantId, id)) as OidcPayload | undefined;
    return payloads.findPayload(em(), tenantId, this.model, id);
  }

  /** The payload whose `uid` is `uid` (sessions, interactions), or undefined. */
  async findByUid(uid: string): Promise<OidcPayload | undefined> {
    return payloads.findPayloadBy(this.scope.em(), this.scope.tenantId, this.model, 'uid', uid);
  }

  /** The payload whose `userCode` is `userCode` (device flow), or undefined. */
  async findByUserCode(userCode: string): Promise<OidcPayload | undefined> {
    return payloads.findPayloadBy(this.scope.em(), this.scope.tenantId, this.model, 'user_code', userCode);
  }

  /** Marks the payload `id` consumed now (a used authorization code, a rotated refresh token). */
  async consume(id: string): Promise<void> {
    await payloads.consumePayload(this.scope.em(), this.scope.tenantId, this.model, id);
  }

  /** Deletes the payload `id` of this model. */
  async destroy(id: string): Promise<void> {
    await payloads.destroyPayload(this.scope.em(), this.scope.tenantId, this.model, id);
  }

  /** Deletes every payload of the tenant's grant `grantId`, whatever its model (all its codes and tokens). */
  async revokeByGrantId(grantId: string): Promise<void> {
    await payloads.revokePayloadsOfGrant(this.scope.em(), this.scope.tenantId, grantId);
  }
}

/**
 * The value of oidc-provider's `adapter` option for one tenant: a factory the provider calls with
 * each model's name (oidc-provider accepts a constructor or a plain factory function).
 */
export function oidcStorageAdapterFactory(scope: OidcStorageScope): (model: string) => OidcStorageAdapter {
  return (model) => new OidcStorageAdapter(scope, model);
}
