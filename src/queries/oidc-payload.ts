import type { EntityManager } from '@mikro-orm/postgresql';
import type { OidcPayloadRecord } from '../entities/oidc.js';
import { scopeTokens } from '../lib/oauth-scope.js';

/**
 * The queries of the `oidc_payload` table (docs/architecture.md "Rules", data access), oidc-provider's storage of one tenant (authorization codes, access and
 * refresh tokens, grants, sessions, interactions): the adapter contract of the library's
 * `adapter` option, one row per (tenant, model, id). Tokens of a user who is no longer live
 * (suspended, deleted) read as absent, so no path (refresh, userinfo, introspection) honours them.
 */

/** An oidc-provider payload: the library's own JSON, opaque here except for the indexed fields. */
export type OidcPayload = OidcPayloadRecord['payload'];

/**
 * The model of the organization a person picked for a grant (docs/oidc.md "Organization picker"): one
 * payload per grant, its id the grant's id, `{grantId, accountId, clientId, organizationId}`; written
 * and read by the oidc feature's organization selection, read here by the personal-data export.
 */
export const GRANT_ORGANIZATION_MODEL = 'GrantOrganization';

/** Models whose payload belongs to a user (`accountId`): absent once the user is not live. */
const USER_BOUND_MODELS = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'Grant', 'Session']);

/** The columns the look-ups read (the JSON column may come back as text), and whether the user is live. */
interface PayloadRow {
  payload: OidcPayload | string;
  consumed_at: OidcPayloadRecord['consumedAt'];
  expires_at: OidcPayloadRecord['expiresAt'];
  user_live: boolean | null;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function toPayload(model: string, row: PayloadRow | undefined): OidcPayload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && new Date(row.expires_at).getTime() <= Date.now()) return undefined;
  if (USER_BOUND_MODELS.has(model) && row.user_live === false) return undefined;
  const payload = typeof row.payload === 'string' ? (JSON.parse(row.payload) as OidcPayload) : row.payload;
  return row.consumed_at ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : payload;
}

const SELECT = `select p.payload, p.consumed_at, p.expires_at,
       case when p.account_id is null then null
            else exists (select 1 from app_user u where u.tenant_id = p.tenant_id and u.id::text = p.account_id
                           and u.deleted_at is null and u.status = 'Active') end as user_live
  from oidc_payload p`;

/** Inserts or replaces one payload; `expiresInSeconds` as oidc-provider passes it. */
export async function upsertPayload(em: EntityManager, tenantId: string, model: string, id: string, payload: OidcPayload, expiresInSeconds?: number): Promise<void> {
  const expiresAt = expiresInSeconds ? new Date(Date.now() + expiresInSeconds * 1000) : null;
  await em.execute(
    `insert into oidc_payload (tenant_id, model, id, payload, grant_id, uid, user_code, account_id, client_id, expires_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (tenant_id, model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
       user_code = excluded.user_code, account_id = excluded.account_id, client_id = excluded.client_id, expires_at = excluded.expires_at`,
    [
      tenantId, model, id, JSON.stringify(payload), str(payload.grantId), str(payload.uid), str(payload.userCode),
      str(payload.accountId), str(payload.clientId), expiresAt,
    ],
  );
}

/** One payload by id, or undefined when absent, expired or of a user no longer live. */
export async function findPayload(em: EntityManager, tenantId: string, model: string, id: string): Promise<OidcPayload | undefined> {
  const rows = (await em.execute(`${SELECT} where p.tenant_id = ? and p.model = ? and p.id = ?`, [tenantId, model, id])) as PayloadRow[];
  return toPayload(model, rows[0]);
}

/** One payload by its `uid` (sessions) or `userCode` (device flow). */
export async function findPayloadBy(em: EntityManager, tenantId: string, model: string, field: 'uid' | 'user_code', value: string): Promise<OidcPayload | undefined> {
  const rows = (await em.execute(`${SELECT} where p.tenant_id = ? and p.model = ? and p.${field} = ?`, [tenantId, model, value])) as PayloadRow[];
  return toPayload(model, rows[0]);
}

/** Marks a payload consumed (a code or a rotated refresh token). */
export async function consumePayload(em: EntityManager, tenantId: string, model: string, id: string): Promise<void> {
  await em.execute('update oidc_payload set consumed_at = now() where tenant_id = ? and model = ? and id = ?', [tenantId, model, id]);
}

/** Deletes one payload. */
export async function destroyPayload(em: EntityManager, tenantId: string, model: string, id: string): Promise<void> {
  await em.execute('delete from oidc_payload where tenant_id = ? and model = ? and id = ?', [tenantId, model, id]);
}

/** Deletes every payload of a grant (all its codes and tokens). */
export async function revokePayloadsOfGrant(em: EntityManager, tenantId: string, grantId: string): Promise<void> {
  await em.execute('delete from oidc_payload where tenant_id = ? and grant_id = ?', [tenantId, grantId]);
}

/**
 * What the tenant's OpenID Provider granted one of its applications for a person (docs/oidc.md): the
 * application's grants that are in force, merged (one sign-in may leave more than one grant row).
 */
export interface GrantedApplication {
  clientId: string;
  /** The application's name (a grant's application always exists: deleting one deletes its grants). */
  applicationName: string;
  /** The OpenID scopes granted (`openid email …`), first-granted first, less any a grant records as rejected. */
  scopes: string[];
  /** Per API (`resource`, RFC 8707), the scopes (permissions) granted there, by resource. */
  resources: { resource: string; scopes: string[] }[];
  /** When the earliest of the grants was made (its payload's `iat`), or null when none holds one. */
  grantedAt: Date | null;
  /** When the last of the grants expires (its row is then swept), or null when one does not expire. */
  expiresAt: Date | null;
  /**
   * The organization the person picked for the application (scope `organizations`, docs/oidc.md
   * "Organization picker") as remembered on its latest grant that holds a pick, whether or not they
   * are still a member; null when none holds one.
   */
  selectedOrganizationId: string | null;
}


/** Adds the values of `more` that `into` lacks, keeping the order. */
function addAll(into: string[], more: string[]): void {
  for (const value of more) if (!into.includes(value)) into.push(value);
}

/**
 * The applications of the tenant to which its OpenID Provider holds grants for the user `userId`
 * (model `Grant`, `account_id`), expired grants left out, oldest grant first: each application's
 * client id and name, granted scopes, per-resource scopes and times, and the organization picked for
 * it (the grant's {@link GRANT_ORGANIZATION_MODEL} payload, joined by the grant's id in the same
 * statement), its grants merged. A suspended or deleted user's grants are deleted (docs/oidc.md
 * "Sessions end everywhere"), so liveness is not looked at. Served by `oidc_payload_account_idx`
 * (`tenant_id, account_id`), the pick by the primary key (`tenant_id, model, id`). Only these fields
 * of the payloads are read: never a grant's id (`jti`), nor any code or token. Read by the
 * personal-data export (docs/lifecycle.md "Data export"); empty when there are none.
 */
export async function findGrantedApplicationsOfAccount(em: EntityManager, tenantId: string, userId: string): Promise<GrantedApplication[]> {
  const rows = (await em.execute(
    `select p.client_id, a.name, p.payload->'openid'->>'scope' as scope,
            p.payload->'rejected'->'openid'->>'scope' as rejected_scope, p.payload->'resources' as resources,
            p.payload->>'iat' as iat, p.expires_at, o.payload->>'organizationId' as organization_id
       from oidc_payload p
       join oidc_application a on a.tenant_id = p.tenant_id and a.client_id = p.client_id
       left join oidc_payload o on o.tenant_id = p.tenant_id and o.model = ? and o.id = p.id and o.account_id = p.account_id
                               and (o.expires_at is null or o.expires_at > now())
      where p.tenant_id = ? and p.account_id = ? and p.model = 'Grant' and (p.expires_at is null or p.expires_at > now())
      order by p.payload->'iat', p.client_id`,
    [GRANT_ORGANIZATION_MODEL, tenantId, userId],
  )) as {
    client_id: string; name: string; scope: string | null; rejected_scope: string | null;
    resources: Record<string, unknown> | string | null; iat: string | null; expires_at: Date | string | null; organization_id: string | null;
  }[];
  const byClient = new Map<string, Omit<GrantedApplication, 'resources'> & { perResource: Map<string, string[]> }>();
  for (const row of rows) {
    const resources = typeof row.resources === 'string' ? (JSON.parse(row.resources) as Record<string, unknown>) : (row.resources ?? {});
    const iat = row.iat === null ? Number.NaN : Number(row.iat);
    const grantedAt = Number.isFinite(iat) ? new Date(iat * 1000) : null;
    const expiresAt = row.expires_at === null ? null : new Date(row.expires_at);
    // as oidc-provider's Grant#getOIDCScope: a rejected scope other than `openid` is not granted
    const rejected = new Set(scopeTokens(row.rejected_scope).filter((scope) => scope !== 'openid'));
    let app = byClient.get(row.client_id);
    if (!app) {
      app = { clientId: row.client_id, applicationName: row.name, scopes: [], grantedAt, expiresAt, selectedOrganizationId: null, perResource: new Map() };
      byClient.set(row.client_id, app);
    } else {
      if (grantedAt && (!app.grantedAt || grantedAt < app.grantedAt)) app.grantedAt = grantedAt;
      if (app.expiresAt && (!expiresAt || expiresAt > app.expiresAt)) app.expiresAt = expiresAt;
    }
    // oldest grant first, so the latest grant holding a pick has the last word
    if (row.organization_id !== null) app.selectedOrganizationId = row.organization_id;
    addAll(app.scopes, scopeTokens(row.scope).filter((scope) => !rejected.has(scope)));
    for (const [resource, scope] of Object.entries(resources)) {
      const scopes = app.perResource.get(resource) ?? [];
      addAll(scopes, scopeTokens(scope));
      app.perResource.set(resource, scopes);
    }
  }
  return [...byClient.values()].map(({ perResource, ...app }) => ({
    ...app,
    resources: [...perResource].sort(([a], [b]) => a.localeCompare(b)).map(([resource, scopes]) => ({ resource, scopes })),
  }));
}

/** Deletes payloads expired for more than a minute, in batches; @returns how many went. */
export async function purgeExpiredPayloads(em: EntityManager, batch = 1000): Promise<number> {
  const rows = (await em.execute(
    `delete from oidc_payload where ctid in (
       select ctid from oidc_payload where expires_at < now() - interval '1 minute' limit ?)
     returning 1`,
    [batch],
  )) as unknown[];
  return rows.length;
}

/** Deletes every payload (grants, codes, tokens, sessions) a user of the tenant holds. */
export async function deletePayloadsOfAccount(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute('delete from oidc_payload where account_id = ? and tenant_id = ?', [userId, tenantId]);
}
