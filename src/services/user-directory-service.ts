import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type User } from '../entities/user.js';

/** The tenant's user list for administrators (SPEC.md GET users). */
export class UserDirectoryService {
  /** The tenant's live (not soft-deleted) users, oldest first. */
  list(em: EntityManager, tenantId: string): Promise<User[]> {
    return em.find(UserSchema, { tenantId, deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' }, disableIdentityMap: true });
  }
}
