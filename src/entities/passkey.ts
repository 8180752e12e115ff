import { EntitySchema } from '@mikro-orm/core';

/** The transports a WebAuthn authenticator may report (W3C WebAuthn Level 3 §5.8.4). */
export const PASSKEY_TRANSPORTS = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'] as const;
export type PasskeyTransport = (typeof PASSKEY_TRANSPORTS)[number];

/**
 * One passkey (a discoverable WebAuthn credential) of a user (docs/passkeys.md). The credential id
 * is unique within its tenant only; nothing here is secret (the private key never leaves the
 * authenticator).
 */
export interface Passkey {
  id: string;
  tenantId: string;
  userId: string;
  /** The credential id, base64url without padding, as the authenticator created it. */
  credentialId: string;
  /** The COSE_Key public key (RFC 9052 §7) from the attested credential data. */
  publicKey: Buffer;
  /** The last signature counter seen (0 for authenticators that do not count). */
  counter: string;
  transports: PasskeyTransport[];
  /** The BE flag at registration: the credential may be synced (a multi-device passkey). */
  backupEligible: boolean;
  /** The BS flag last seen: the credential is currently backed up. */
  backedUp: boolean;
  aaguid: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export const PasskeySchema = new EntitySchema<Passkey>({
  name: 'Passkey',
  tableName: 'passkey',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid' },
    credentialId: { type: 'string', length: 1400 },
    publicKey: { type: 'blob' },
    counter: { type: 'bigint' },
    transports: { type: 'json' },
    backupEligible: { type: 'boolean' },
    backedUp: { type: 'boolean' },
    aaguid: { type: 'string', length: 36 },
    name: { type: 'string', length: 100 },
    createdAt: { type: 'Date' },
    lastUsedAt: { type: 'Date', nullable: true },
  },
});
