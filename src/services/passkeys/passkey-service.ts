import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Config } from '../../config.js';
import type { Passkey, PasskeyTransport } from '../../entities/passkey.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { actingAs, asSystem, withEm, type RequestScope, type TenantScope } from '../../lib/request-scope.js';
import { constantTimeEqual, sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import type { FactorChangeNotifier } from '../mfa/factor-change-notice.js';
import { assertRecentSignIn, type EnrollingSession } from '../mfa/mfa-enrollment-service.js';
import type { PasswordSignInService, SignIn } from '../sign-in/password-sign-in-service.js';
import { findLiveUserByEmail, findLiveUserById } from '../../queries/user.js';
import { PASSKEY_ERRORS, PASSKEY_REASONS } from '../../errors/passkey.js';
import { assertMaySignIn } from '../account-policy/sign-in-eligibility.js';
import {
  advancePasskeyCounter, countPasskeysOfUser, deletePasskeyOfUser, findLiveOwnerEmailOfCredential, findPasskeyByCredentialId, findPasskeysOfUser,
  insertPasskey,
} from '../../queries/passkey.js';
import {
  deleteExpiredChallenges, deleteRegistrationChallenges, insertChallenge, spendAuthenticationChallenge, spendRegistrationChallenges,
} from '../../queries/webauthn-challenge.js';
import { SESSION_ERRORS } from '../../errors/session.js';


/**
 * @simplewebauthn/server (with its CBOR, ASN.1 and X.509 stack), loaded on the first passkey
 * request: about 5 MB of heap most instances would hold for nothing (docs/performance.md "What is
 * left"). Node caches the module after the first load.
 */
const webAuthn = () => import('@simplewebauthn/server');

/** Seconds a registration or sign-in challenge stays usable: 5 minutes (also the ceremony timeout). */
export const PASSKEY_CHALLENGE_TTL_SECONDS = 300;
/** COSE algorithms accepted for new passkeys (RFC 9053): EdDSA, ES256, RS256. */
const SUPPORTED_ALGORITHMS = [-8, -7, -257];

/** The relying party of this service: the host and origin of `PUBLIC_URL` (WebAuthn §5.1.4 "RP ID"). */
export interface RelyingParty {
  /** The RP id: the hostname of `PUBLIC_URL` (no scheme, no port). */
  id: string;
  /** The expected `clientDataJSON.origin`: scheme, host and port of `PUBLIC_URL`. */
  origin: string;
}

/** The relying party of a `PUBLIC_URL` (e.g. `https://id.example.com` → id `id.example.com`). */
export function relyingPartyOf(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, origin: url.origin };
}

/** One passkey as the API shows it (docs/passkeys.md). */
export interface PasskeyView {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  backupEligible: boolean;
  backedUp: boolean;
  transports: PasskeyTransport[];
}

/** The options of a sign-in ceremony and the id the client sends back with its response. */
export interface PasskeySignInOptions {
  challengeId: string;
  options: PublicKeyCredentialRequestOptionsJSON;
}

function toView(passkey: Passkey): PasskeyView {
  return {
    id: passkey.id,
    name: passkey.name,
    createdAt: new Date(passkey.createdAt).toISOString(),
    lastUsedAt: passkey.lastUsedAt ? new Date(passkey.lastUsedAt).toISOString() : null,
    backupEligible: passkey.backupEligible,
    backedUp: passkey.backedUp,
    transports: passkey.transports,
  };
}

/** The WebAuthn user handle of a user: the UTF-8 bytes of the user's uuid (no personal data). */
function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(userId) as Uint8Array<ArrayBuffer>;
}

/**
 * The passkeys of a user of a tenant as the API shows them (never the key), oldest first; used by
 * `GET me/passkeys` and the personal-data export.
 */
export async function passkeysOf(em: EntityManager, tenantId: string, userId: string): Promise<PasskeyView[]> {
  return (await findPasskeysOfUser(em, tenantId, userId)).map(toView);
}

/** A challenge verifier for the library: the presented challenge must hash to the stored one. */
function matchesChallenge(challengeHash: string): (challenge: string) => boolean {
  return (challenge) => constantTimeEqual(sha256Hex(challenge), challengeHash);
}

/**
 * Passkeys (W3C WebAuthn Level 3) on `@simplewebauthn/server` (docs/passkeys.md): registration by a
 * signed-in user after a recent sign-in, listing and deletion, and sign-in with a discoverable
 * credential (no email) or email first. A passkey is possession plus inherence or knowledge (user
 * verification is required), so a passkey sign-in satisfies every MFA policy by itself.
 *
 * Challenges are single-use (deleted as they are presented, whatever the outcome), live
 * {@link PASSKEY_CHALLENGE_TTL_SECONDS}, are bound to their tenant (and user when known) and are
 * stored only as SHA-256 hashes. Every query is scoped by tenant: a credential registered in one
 * tenant signs in to no other.
 * Registration and removal take the request scope and audit with its actor; a sign-in takes the
 * workspace's TenantScope and audits as the credential's owner (actingAs), or as `system` for an
 * unknown credential.
 */
export class PasskeyService {
  private readonly rp: RelyingParty;

  constructor(
    config: Pick<Config, 'publicUrl'>,
    private readonly auth: PasswordSignInService,
    private readonly audit: AuditService,
    private readonly notices: FactorChangeNotifier,
  ) {
    this.rp = relyingPartyOf(config.publicUrl);
  }

  /** The relying party (from `PUBLIC_URL`). */
  get relyingParty(): RelyingParty {
    return this.rp;
  }

  /**
   * `mfa/passkeys/registration-options`: creation options for a new discoverable, user-verified
   * credential (`excludeCredentials` = the user's passkeys). The user's earlier open registration
   * challenge ends.
   * @throws ApiError 401 `reauthentication_required` when the session is not recent.
   */
  async registrationOptions(em: EntityManager, tenant: Tenant, session: EnrollingSession): Promise<PublicKeyCredentialCreationOptionsJSON> {
    await assertRecentSignIn(em, tenant, session);
    const user = await this.liveUser(em, tenant, session.userId);
    const existing = await findPasskeysOfUser(em, tenant.id, user.id);
    const { generateRegistrationOptions } = await webAuthn();
    const options = await generateRegistrationOptions({
      rpName: tenant.name,
      rpID: this.rp.id,
      userName: user.email,
      userDisplayName: user.email,
      userID: userHandleOf(user.id),
      timeout: PASSKEY_CHALLENGE_TTL_SECONDS * 1000,
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    });
    await deleteRegistrationChallenges(em, tenant.id, user.id);
    await this.storeChallenge(em, tenant, 'registration', user.id, true, options.challenge);
    return options;
  }

  /**
   * `mfa/passkeys/registration-verify`: verifies the attestation (format `none` or any the library
   * verifies; user verification required; origin and RP id of `PUBLIC_URL`) against the user's open
   * registration challenge, which is spent whatever the outcome. Stores the passkey, audits
   * `PasskeyRegistered` and mails the user a factor-change notice.
   * @throws ApiError 401 `reauthentication_required`, 400 `passkey_challenge_invalid` / `invalid_passkey`,
   *   409 `passkey_already_registered`.
   */
  async register(
    scope: RequestScope, session: EnrollingSession, response: RegistrationResponseJSON, name: string | undefined,
  ): Promise<PasskeyView> {
    const { em, tenant } = scope;
    await assertRecentSignIn(em, tenant, session);
    const user = await this.liveUser(em, tenant, session.userId);
    const challenges = await spendRegistrationChallenges(em, tenant.id, user.id);
    const challenge = challenges.find((c) => new Date(c.expiresAt).getTime() > Date.now());
    if (!challenge) throw PASSKEY_ERRORS.challengeInvalid();

    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      const { verifyRegistrationResponse } = await webAuthn();
      verification = await verifyRegistrationResponse({
        response,
        expectedChallenge: matchesChallenge(challenge.challengeHash),
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        requireUserVerification: true,
        supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
      });
    } catch {
      throw PASSKEY_ERRORS.invalid();
    }
    const info = verification.registrationInfo;
    if (!verification.verified || !info || !info.userVerified) throw PASSKEY_ERRORS.invalid();

    const now = new Date();
    const passkey: Passkey = {
      id: randomUUID(),
      tenantId: tenant.id,
      userId: user.id,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey),
      counter: String(info.credential.counter),
      transports: (response.response.transports ?? []) as PasskeyTransport[],
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
      name: name ?? `Passkey ${now.toISOString().slice(0, 10)}`,
      createdAt: now,
      lastUsedAt: null,
    };
    try {
      await em.transactional(async (tx) => {
        await insertPasskey(tx, passkey);
        await this.audit.record(withEm(scope, tx), {
          action: 'PasskeyRegistered',
          target: { type: 'user', id: user.id },
          details: { passkeyId: passkey.id, name: passkey.name, aaguid: info.aaguid, backupEligible: passkey.backupEligible, fmt: info.fmt },
        });
        await this.notices.notify(withEm(scope, tx), user, 'passkey_added');
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw PASSKEY_ERRORS.alreadyRegistered();
      throw err;
    }
    return toView(passkey);
  }

  /** `GET me/passkeys`: the user's passkeys, oldest first. */
  async list(em: EntityManager, tenant: Tenant, userId: string): Promise<PasskeyView[]> {
    return passkeysOf(em, tenant.id, userId);
  }

  /** How many passkeys the user has (for sign-in choices and the account page). */
  async countOf(em: EntityManager, tenant: Tenant, userId: string): Promise<number> {
    return countPasskeysOfUser(em, tenant.id, userId);
  }

  /**
   * `DELETE me/passkeys/{id}`: removes one of the session user's passkeys (a recent sign-in is
   * required: a stolen token must not strip a factor), audits `PasskeyDeleted`, mails a notice.
   * @throws ApiError 401 `reauthentication_required`, 404 `passkey_not_found` (also for another user's
   *   or another tenant's passkey).
   */
  async remove(scope: RequestScope, session: EnrollingSession, passkeyId: string): Promise<void> {
    const { em, tenant } = scope;
    await assertRecentSignIn(em, tenant, session);
    const user = await this.liveUser(em, tenant, session.userId);
    await em.transactional(async (tx) => {
      const deleted = await deletePasskeyOfUser(tx, tenant.id, user.id, passkeyId);
      if (deleted === undefined) throw PASSKEY_ERRORS.passkeyNotFound();
      await this.audit.record(withEm(scope, tx), {
        action: 'PasskeyDeleted',
        target: { type: 'user', id: user.id },
        details: { passkeyId, name: deleted },
      });
      await this.notices.notify(withEm(scope, tx), user, 'passkey_removed');
    });
  }

  /**
   * `auth/passkey/options`: request options and a `challengeId`. `allowCredentials` is always empty:
   * every passkey here is discoverable (registered with `residentKey: required`), so the
   * authenticator offers its own credentials, and the answer for an email with passkeys, one without
   * and an unknown one is the same (docs/passkeys.md "Email first"). With `email` the challenge is
   * bound to that live user (or to nobody), so only that user's passkey can spend it.
   */
  async signInOptions(em: EntityManager, tenant: Tenant, email: string | undefined): Promise<PasskeySignInOptions> {
    let userId: string | null = null;
    if (email !== undefined) {
      const user = await findLiveUserByEmail(em, tenant.id, email);
      userId = user?.id ?? null;
    }
    const { generateAuthenticationOptions } = await webAuthn();
    const options = await generateAuthenticationOptions({
      rpID: this.rp.id,
      allowCredentials: [],
      userVerification: 'required',
      timeout: PASSKEY_CHALLENGE_TTL_SECONDS * 1000,
    });
    const challengeId = await this.storeChallenge(em, tenant, 'authentication', userId, email !== undefined, options.challenge);
    return { challengeId, options };
  }

  /**
   * The email of the live user of the tenant owning the presented credential, or null, so
   * `auth/passkey/verify` can run in that account's login budget.
   */
  async accountEmailOf(em: EntityManager, tenant: Tenant, credentialId: string): Promise<string | null> {
    return findLiveOwnerEmailOfCredential(em, tenant.id, credentialId);
  }

  /**
   * `auth/passkey/verify`: spends the challenge, finds the credential in this tenant, verifies the
   * assertion (signature, origin, RP id, user present and verified, user handle), refuses a
   * signature counter that did not go up (audits `PasskeyCloneSuspected`), then starts the session
   * (`UserLogin` with `details.method` `passkey`, `SessionCreated`). Failures are audited as
   * `UserLoginFailed` (`via` `passkey`).
   * @throws ApiError 401 `passkey_challenge_invalid`, `invalid_passkey`, `passkey_counter_regressed`,
   *   `user_suspended`, `email_not_verified`.
   */
  async signIn(scope: TenantScope, challengeId: string, response: AuthenticationResponseJSON): Promise<SignIn> {
    const { em, tenant } = scope;
    const challenge = await spendAuthenticationChallenge(em, tenant.id, challengeId);
    if (!challenge || new Date(challenge.expiresAt).getTime() <= Date.now()) throw PASSKEY_ERRORS.signInChallengeInvalid();

    const passkey = await findPasskeyByCredentialId(em, tenant.id, response.id);
    if (!passkey) return this.refuse(scope, null, 'unknown_credential');
    if (challenge.userBound && challenge.userId !== passkey.userId) return this.refuse(scope, passkey, 'other_user');
    const userHandle = response.response.userHandle;
    if (userHandle !== undefined && userHandle !== '' && !constantTimeEqual(userHandle, Buffer.from(userHandleOf(passkey.userId)).toString('base64url'))) {
      return this.refuse(scope, passkey, 'user_handle_mismatch');
    }

    let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      const { verifyAuthenticationResponse } = await webAuthn();
      verification = await verifyAuthenticationResponse({
        response,
        expectedChallenge: matchesChallenge(challenge.challengeHash),
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        // The counter is checked below, after the signature: the library checks it before, which
        // would let an unsigned response raise a clone alarm.
        credential: { id: passkey.credentialId, publicKey: new Uint8Array(passkey.publicKey), counter: 0, transports: passkey.transports },
        requireUserVerification: true,
      });
    } catch {
      return this.refuse(scope, passkey, 'verification_failed');
    }
    if (!verification.verified || !verification.authenticationInfo.userVerified) return this.refuse(scope, passkey, 'verification_failed');

    const user = await findLiveUserById(em, tenant.id, passkey.userId);
    if (!user) return this.refuse(scope, passkey, 'user_gone');
    assertMaySignIn(user.status);

    const info = verification.authenticationInfo;
    if (!(await advancePasskeyCounter(em, tenant.id, passkey.id, info.newCounter, info.credentialBackedUp))) {
      await this.audit.record(actingAs(scope, user.id), {
        action: 'PasskeyCloneSuspected',
        target: { type: 'user', id: user.id },
        details: { passkeyId: passkey.id, storedCounter: Number(passkey.counter), presentedCounter: info.newCounter },
      });
      await this.notices.notify(actingAs(scope, user.id), user, 'passkey_clone_suspected');
      throw PASSKEY_ERRORS.counterRegressed();
    }
    const tokens = await this.auth.completeSignIn(scope, user, 'passkey', { passkeyId: passkey.id });
    return { user, tokens };
  }

  /** Audits a refused passkey sign-in (`UserLoginFailed`) and throws 401 `invalid_passkey`. */
  private async refuse(scope: TenantScope, passkey: Passkey | null, why: string): Promise<never> {
    // an unknown credential names no one: the system refuses (docs/audit.md)
    await this.audit.record(passkey ? actingAs(scope, passkey.userId) : asSystem(scope), {
      action: 'UserLoginFailed', target: passkey ? { type: 'user', id: passkey.userId } : undefined,
      details: { reason: PASSKEY_REASONS.invalid, via: 'passkey', check: why, ...(passkey ? { passkeyId: passkey.id } : {}) },
    });
    throw PASSKEY_ERRORS.signInInvalid();
  }

  private async liveUser(em: EntityManager, tenant: Tenant, userId: string): Promise<User> {
    const user = await findLiveUserById(em, tenant.id, userId);
    if (!user) throw SESSION_ERRORS.sessionRevoked();
    return user;
  }

  /** Stores a challenge (hashed) for 5 minutes, after clearing the tenant's expired ones; returns its id. */
  private async storeChallenge(em: EntityManager, tenant: Tenant, purpose: 'registration' | 'authentication', userId: string | null, userBound: boolean, challenge: string): Promise<string> {
    const id = randomUUID();
    const now = new Date();
    await deleteExpiredChallenges(em, tenant.id, now);
    await insertChallenge(em, {
      id, tenantId: tenant.id, userId, purpose, userBound, challengeHash: sha256Hex(challenge), createdAt: now,
      expiresAt: new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_SECONDS * 1000),
    });
    return id;
  }

}
