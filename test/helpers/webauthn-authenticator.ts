import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software WebAuthn authenticator for tests (W3C WebAuthn Level 3 §6): ES256 (P-256) keys from
 * node:crypto, `none` attestation in CBOR, authenticator data with the UP, UV, BE, BS and AT flags,
 * and real ECDSA signatures over `authenticatorData ‖ SHA-256(clientDataJSON)`, so the server
 * verifies them exactly as it verifies a hardware or platform authenticator. It plays the browser
 * too: it writes `clientDataJSON` with the origin it is told to claim.
 */

/** The JSON shapes the browser library produces, as far as these tests need them. */
export interface RegistrationResponse {
  id: string;
  rawId: string;
  type: 'public-key';
  clientExtensionResults: Record<string, unknown>;
  authenticatorAttachment: 'platform';
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
}
export interface AuthenticationResponse {
  id: string;
  rawId: string;
  type: 'public-key';
  clientExtensionResults: Record<string, unknown>;
  authenticatorAttachment: 'platform';
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string };
}

interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
  excludeCredentials?: { id: string }[];
}
interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

interface StoredCredential {
  id: string;
  privateKey: KeyObject;
  publicJwk: { x: string; y: string };
  rpId: string;
  userHandle: string;
  counter: number;
}

/** What a test may falsify in one ceremony (attack paths). */
export interface CeremonyOverrides {
  /** The origin written into clientDataJSON (default: the authenticator's origin). */
  origin?: string;
  /** The RP id hashed into authenticatorData (default: the options' RP id). */
  rpId?: string;
  /** The challenge written into clientDataJSON (default: the options' challenge). */
  challenge?: string;
  /** Clear the UV flag (user not verified). */
  noUserVerification?: boolean;
  /** Use this credential (get) regardless of allowCredentials. */
  credentialId?: string;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

const b64url = (bytes: Uint8Array | Buffer): string => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

export class SoftwareAuthenticator {
  private readonly credentials = new Map<string, StoredCredential>();

  /**
   * @param origin the origin the "browser" reports (must be the server's `PUBLIC_URL` origin).
   * @param options `counting`: the signature counter goes up on every use (default true; false
   *   models authenticators that always report 0); `backupEligible`: set BE and BS (a synced passkey).
   */
  constructor(
    readonly origin: string,
    private readonly options: { counting?: boolean; backupEligible?: boolean } = {},
  ) {}

  /** A copy holding the same keys and counters: a cloned authenticator. */
  clone(): SoftwareAuthenticator {
    const copy = new SoftwareAuthenticator(this.origin, this.options);
    for (const [id, cred] of this.credentials) copy.credentials.set(id, { ...cred });
    return copy;
  }

  /** The credential ids this authenticator holds. */
  get credentialIds(): string[] {
    return [...this.credentials.keys()];
  }

  /** `navigator.credentials.create()`: a new ES256 credential with `none` attestation. */
  create(options: CreationOptions, overrides: CeremonyOverrides = {}): RegistrationResponse {
    const rpId = overrides.rpId ?? options.rp.id ?? new URL(this.origin).hostname;
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if ([...this.credentials.values()].some((c) => excluded.has(c.id))) throw new Error('InvalidStateError: credential excluded');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
    const credentialId = randomBytes(32);
    const cred: StoredCredential = {
      id: b64url(credentialId), privateKey, publicJwk: jwk, rpId, userHandle: options.user.id, counter: 0,
    };
    const coseKey = isoCBOR.encode(new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x, 'base64url')],
      [-3, Buffer.from(jwk.y, 'base64url')],
    ]));
    const counter = this.nextCounter(cred);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      sha256(rpId), Buffer.from([this.flags(overrides) | FLAG_AT]), counter,
      Buffer.alloc(16), idLength, credentialId, Buffer.from(coseKey),
    ]);
    const attestationObject = isoCBOR.encode(new Map<string, string | Uint8Array | Map<string, string>>([
      ['fmt', 'none'], ['attStmt', new Map<string, string>()], ['authData', authData],
    ]));
    const clientDataJSON = this.clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides);
    this.credentials.set(cred.id, cred);
    return {
      id: cred.id, rawId: cred.id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal', 'hybrid'] },
    };
  }

  /**
   * `navigator.credentials.get()`: an assertion by a credential of `options.allowCredentials`, or
   * any (discoverable) credential for the RP id when the list is empty.
   */
  get(options: RequestOptions, overrides: CeremonyOverrides = {}): AuthenticationResponse {
    const requestedRpId = options.rpId ?? new URL(this.origin).hostname;
    const rpId = overrides.rpId ?? requestedRpId;
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const cred = overrides.credentialId
      ? this.credentials.get(overrides.credentialId)
      : [...this.credentials.values()].find((c) => (allowed.length === 0 ? c.rpId === requestedRpId : allowed.includes(c.id)));
    if (!cred) throw new Error('NotAllowedError: no matching credential');
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.flags(overrides)]), this.nextCounter(cred)]);
    const clientDataJSON = this.clientData('webauthn.get', overrides.challenge ?? options.challenge, overrides);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), cred.privateKey);
    return {
      id: cred.id, rawId: cred.id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(signature), userHandle: cred.userHandle },
    };
  }

  private flags(overrides: CeremonyOverrides): number {
    let flags = FLAG_UP | (overrides.noUserVerification ? 0 : FLAG_UV);
    if (this.options.backupEligible) flags |= FLAG_BE | FLAG_BS;
    return flags;
  }

  private nextCounter(cred: StoredCredential): Buffer {
    if (this.options.counting !== false) cred.counter += 1;
    const out = Buffer.alloc(4);
    out.writeUInt32BE(this.options.counting === false ? 0 : cred.counter);
    return out;
  }

  private clientData(type: string, challenge: string, overrides: CeremonyOverrides): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: overrides.origin ?? this.origin, crossOrigin: false }), 'utf8');
  }
}
