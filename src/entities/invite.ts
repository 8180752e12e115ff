import { EntitySchema } from '@mikro-orm/core';
import type { UserRole } from './user.js';

export const INVITE_STATUSES = ['Open', 'Accepted', 'Revoked', 'Expired'] as const;
export type InviteStatus = (typeof INVITE_STATUSES)[number];

/**
 * An invitation to join a tenant (docs/decisions.md "Invites"). The token is
 * stored only as its SHA-256 hash. An `Open` invite past `expiresAt` is marked `Expired` the next
 * time it is listed or presented.
 */
export interface Invite {
  id: string;
  tenantId: string;
  /** Lower-cased address the invite was sent to; the accepted user gets this email. */
  email: string;
  role: UserRole;
  status: InviteStatus;
  tokenHash: string;
  /** `user` or `api_key`: the kind of credential that created the invite. */
  invitedByType: string;
  /** Id of the user or API key that created the invite. */
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  acceptedUserId: string | null;
  revokedAt: Date | null;
  /** The organization accepting makes the person a member of (docs/organizations.md "Invitations"), or null. */
  organizationId: string | null;
  /** Names of the organization roles the membership gets (empty without `organizationId`). */
  organizationRoles: string[];
}

export const InviteSchema = new EntitySchema<Invite>({
  name: 'Invite',
  tableName: 'invite',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    email: { type: 'string', length: 254 },
    role: { type: 'string', length: 16 },
    status: { type: 'string', length: 16 },
    tokenHash: { type: 'string', length: 64, unique: true },
    invitedByType: { type: 'string', length: 16 },
    invitedBy: { type: 'uuid', nullable: true },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
    acceptedAt: { type: 'Date', nullable: true },
    acceptedUserId: { type: 'uuid', nullable: true },
    revokedAt: { type: 'Date', nullable: true },
    organizationId: { type: 'uuid', nullable: true },
    organizationRoles: { type: 'json' },
  },
});
