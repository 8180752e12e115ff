import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApplicationSignIn, ProviderSessionEnder } from '../sessions/session-service.js';
import {
  deleteHostedLoginsOfUser, findApplicationSignInsOfUser, findUserOfHostedLoginSession,
} from '../../queries/oidc-hosted-login.js';
import { deletePayloadsOfAccount } from '../../queries/oidc-payload.js';

/**
 * The OpenID Provider's side of ending a person's sessions (docs/oidc.md "Sessions end everywhere",
 * OWASP ASVS 7.4.3): the provider sessions, grants, authorization codes, access and refresh tokens of
 * the person are deleted (never hidden, so no reactivation or restore brings them back), in the
 * caller's transaction. The session service calls it on every path that ends hosted sessions.
 */
export class ProviderSessionRevocation implements ProviderSessionEnder {
  /**
   * Deletes every provider session, grant, code and token of a user of the tenant, and the records
   * of which hosted sessions signed in (logout-all, password change or reset, suspension, deletion).
   */
  async endAllOfUser(em: EntityManager, tenantId: string, userId: string): Promise<void> {
    await deletePayloadsOfAccount(em, tenantId, userId);
    await deleteHostedLoginsOfUser(em, tenantId, userId);
  }

  /**
   * A hosted session ended (logout, its owner or an admin ended it, a refresh token replayed): when
   * it ever signed in at the provider, every provider session and grant of its user ends with it.
   * @returns true when the session had signed in at the provider.
   */
  async endSignedInBy(em: EntityManager, tenantId: string, sessionId: string): Promise<boolean> {
    const userId = await findUserOfHostedLoginSession(em, tenantId, sessionId);
    if (userId === undefined) return false;
    await this.endAllOfUser(em, tenantId, userId);
    return true;
  }

  /** The application sign-ins of each hosted session of a user of the tenant, keyed by session id, newest first. */
  async applicationSignIns(em: EntityManager, tenantId: string, userId: string): Promise<Map<string, ApplicationSignIn[]>> {
    const bySession = new Map<string, ApplicationSignIn[]>();
    for (const row of await findApplicationSignInsOfUser(em, tenantId, userId)) {
      const list = bySession.get(row.sessionId) ?? [];
      list.push({ clientId: row.clientId, name: row.applicationName, lastSignedInAt: row.lastSignedInAt });
      bySession.set(row.sessionId, list);
    }
    return bySession;
  }
}
