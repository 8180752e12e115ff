import { z } from 'zod';
import { PASSKEY_TRANSPORTS } from '../entities/passkey.js';
import { displayName, timestampOutput } from './schemas.js';

/**
 * Zod shapes of the WebAuthn JSON serialisations (W3C WebAuthn Level 3 §5.1.8, §5.1.10,
 * `RegistrationResponseJSON` / `AuthenticationResponseJSON` / `PublicKeyCredential*OptionsJSON`),
 * shared by the `mfa/passkeys/*`, `me/passkeys*` and `auth/passkey/*` routes (docs/passkeys.md).
 */

/** base64url (RFC 4648 §5), padding tolerated, at most `max` characters. */
const base64url = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*={0,2}$/, 'must be base64url');

/** A credential id: at most 1,023 bytes (WebAuthn §5.8.3), i.e. 1,364 base64url characters. */
const credentialId = base64url(1400).min(1);
const transport = z.enum(PASSKEY_TRANSPORTS);
const transports = z.array(transport).max(PASSKEY_TRANSPORTS.length);
const attachment = z.enum(['platform', 'cross-platform']);
/** `AuthenticationExtensionsClientOutputs`: the outputs this service may read; other extensions are dropped. */
const clientExtensionResults = z.object({
  appid: z.boolean().optional(),
  credProps: z.object({ rk: z.boolean().optional() }).optional(),
  hmacCreateSecret: z.boolean().optional(),
});

/** What `navigator.credentials.create()` answered, as `@simplewebauthn/browser` serialises it. */
export const registrationResponseInput = z.object({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  authenticatorAttachment: attachment.optional(),
  clientExtensionResults,
  response: z.object({
    clientDataJSON: base64url(8192),
    attestationObject: base64url(65536),
    authenticatorData: base64url(8192).optional(),
    transports: transports.optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: base64url(8192).optional(),
  }),
});

/** What `navigator.credentials.get()` answered, as `@simplewebauthn/browser` serialises it. */
export const authenticationResponseInput = z.object({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  authenticatorAttachment: attachment.optional(),
  clientExtensionResults,
  response: z.object({
    clientDataJSON: base64url(8192),
    authenticatorData: base64url(8192),
    signature: base64url(2048),
    userHandle: base64url(128).optional(),
  }),
});

const descriptor = z.object({ id: z.string(), type: z.literal('public-key'), transports: transports.optional() });

/** `PublicKeyCredentialCreationOptionsJSON` for `navigator.credentials.create()`. */
export const registrationOptionsOutput = z.object({
  challenge: z.string(),
  rp: z.object({ name: z.string(), id: z.string().optional() }),
  user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
  pubKeyCredParams: z.array(z.object({ alg: z.number().int(), type: z.literal('public-key') })),
  timeout: z.number().int().optional(),
  excludeCredentials: z.array(descriptor).optional(),
  authenticatorSelection: z
    .object({
      authenticatorAttachment: attachment.optional(),
      residentKey: z.enum(['discouraged', 'preferred', 'required']).optional(),
      requireResidentKey: z.boolean().optional(),
      userVerification: z.enum(['discouraged', 'preferred', 'required']).optional(),
    })
    .optional(),
  attestation: z.enum(['none', 'direct', 'enterprise', 'indirect']).optional(),
  hints: z.array(z.enum(['hybrid', 'security-key', 'client-device'])).optional(),
  extensions: z.object({ credProps: z.boolean().optional() }).optional(),
});

/** `PublicKeyCredentialRequestOptionsJSON` for `navigator.credentials.get()`, with its `challengeId`. */
export const authenticationOptionsOutput = z.object({
  challengeId: z.uuid(),
  options: z.object({
    challenge: z.string(),
    rpId: z.string().optional(),
    timeout: z.number().int().optional(),
    allowCredentials: z.array(descriptor).optional(),
    userVerification: z.enum(['discouraged', 'preferred', 'required']).optional(),
  }),
});

/** One passkey as `GET me/passkeys` and `registration-verify` show it (never the key itself). */
export const passkeyOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  createdAt: timestampOutput,
  lastUsedAt: timestampOutput.nullable(),
  backupEligible: z.boolean(),
  backedUp: z.boolean(),
  transports: transports,
});

/** A passkey name: 1 to 100 characters. */
export const passkeyName = displayName(100);
