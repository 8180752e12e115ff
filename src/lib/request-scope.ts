import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../entities/tenant.js';
import { SYSTEM_ACTOR, type Actor, type RequestMeta } from './request-meta.js';

/**
 * What one request under `/v1/{tenantSlug}` is about, built once by the request pipeline and handed
 * to a service as its first argument, before the operation's own (domain) arguments:
 * `webhooks.update(scope, id, changes)`. The audit reads who acted and where from out of it
 * (AuditService.record), so no service passes an actor or request metadata along by hand.
 *
 * - `em`: the request's entity manager; inside a service's transaction, that transaction's
 *   (`withEm(scope, tx)`), so what the scope writes commits or rolls back with the change.
 * - `tenant`: the live workspace of the path.
 * - `actor`: who acts (docs/audit.md `actorType`, `actorId`): the signed-in user or the API key of
 *   the credential; a flow that finds out who acts (a sign-in) names the user with `actingAs`.
 * - `meta`: where the request came from (client IP, user agent, language), recorded on sessions
 *   and audit events.
 *
 * Model: Logto's per-tenant libraries (`createUserLibrary(tenantId, queries)`) and the `dependencies`
 * of Kratos' handlers; here the per-request part is a value, the services stay built once.
 */
export interface RequestScope {
  em: EntityManager;
  tenant: Tenant;
  actor: Actor;
  meta: RequestMeta;
}

/**
 * A request of a workspace before it proved who it is: sign-up, sign-in, the second factor, emailed
 * links. Its flows learn the actor on the way and record their events with `actingAs(scope, userId)`
 * or, when nobody is identified (an unknown email), `asSystem(scope)`, as docs/audit.md lists them.
 * Every {@link RequestScope} is one too.
 */
export type TenantScope = Omit<RequestScope, 'actor'>;

/**
 * What the audit reads of a scope: the entity manager it writes with, the workspace's id, the actor
 * and the request metadata. A {@link RequestScope} is one; work without a request (a job, a sweep)
 * builds one with {@link systemScope}.
 */
export interface AuditScope {
  em: EntityManager;
  tenant: Pick<Tenant, 'id'>;
  actor: Actor;
  meta: RequestMeta;
}

/** The metadata of work no request carries (jobs, sweeps): no IP, no user agent. */
export const NO_REQUEST_META: RequestMeta = Object.freeze({ ip: null, userAgent: null });

/** A user as the audit actor (docs/audit.md `actorType` `user`). */
export function userActor(userId: string): Actor {
  return { type: 'user', id: userId };
}

/**
 * The same scope with another entity manager: the transaction a service opened
 * (`em.transactional(async (tx) => … withEm(scope, tx) …)`), so the audit events and every other
 * write of the scope go into it.
 */
export function withEm<S extends { em: EntityManager }>(scope: S, em: EntityManager): S {
  return { ...scope, em };
}

/**
 * The scope with the user `userId` as its actor: the user a sign-in, a sign-up or an emailed link
 * identified, or the signed-in user acting on their own account.
 */
export function actingAs<S extends Omit<AuditScope, 'actor'>>(scope: S, userId: string): S & { actor: Actor } {
  return { ...scope, actor: userActor(userId) };
}

/**
 * The scope with the `system` actor (docs/audit.md): what the service does of its own accord within
 * a request (an invite found past its expiry, a replayed refresh token's family revoked), or a
 * refusal whose caller is nobody known (an unknown email's failed sign-in).
 */
export function asSystem<S extends Omit<AuditScope, 'actor'>>(scope: S): S & { actor: Actor } {
  return { ...scope, actor: SYSTEM_ACTOR };
}

/**
 * The scope of work that runs outside any request (the job worker, start-up, a sweep) for one
 * workspace: the `system` actor and {@link NO_REQUEST_META}.
 */
export function systemScope(em: EntityManager, tenantId: string): AuditScope {
  return { em, tenant: { id: tenantId }, actor: SYSTEM_ACTOR, meta: NO_REQUEST_META };
}
