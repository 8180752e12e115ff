import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { LRUCache } from 'lru-cache';
import type { UserRole } from '../entities/user.js';

/** Lifetime of an access token in seconds (15 minutes). */
export const ACCESS_TOKEN_TTL_SECONDS = 900;
export const ACCESS_TOKEN_ISSUER = 'tenant-identity';
export const ACCESS_TOKEN_AUDIENCE = 'tenant-identity-api';

/** The claims of an access token (docs/api-rules.md "Credentials and sessions"; RFC 7519 names). */
export interface AccessTokenClaims {
  /** User id. */
  sub: string;
  /** Tenant id. */
  tid: string;
  /** Session (refresh-token family) id. */
  sid: string;
  role: UserRole;
}

/** Why a presented access token was refused; becomes `details.reason`. */
export type AccessTokenFailure = 'token_expired' | 'invalid_token';

const secretKeys = new WeakMap<Buffer, KeyObject>();

/**
 * The HMAC key object of a secret, made once per secret. Handing jsonwebtoken a raw Buffer makes it
 * try (and fail, by exception) to parse the bytes as a PEM public/private key on every call first.
 */
function hmacKey(secret: Buffer): KeyObject {
  let key = secretKeys.get(secret);
  if (!key) {
    key = createSecretKey(secret);
    secretKeys.set(secret, key);
  }
  return key;
}

/**
 * Signs an RFC 7519 JWT with HS256: `exp = iat + 900`, `iss` and `aud` fixed, and a random `jti`
 * (RFC 7519 §4.1.7) so two tokens of one session issued within the same second still differ.
 * @param secret the `JWT_SECRET` bytes (≥ 32).
 */
export function signAccessToken(claims: AccessTokenClaims, secret: Buffer): string {
  return jwt.sign({ tid: claims.tid, sid: claims.sid, role: claims.role }, hmacKey(secret), {
    algorithm: 'HS256',
    subject: claims.sub,
    expiresIn: ACCESS_TOKEN_TTL_SECONDS,
    issuer: ACCESS_TOKEN_ISSUER,
    audience: ACCESS_TOKEN_AUDIENCE,
    jwtid: randomUUID(),
  });
}

/** How many verified tokens each secret's cache holds at most (about 1 KiB each). */
const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/** A verified token's claims and its `exp` in milliseconds since the epoch. */
interface VerifiedToken {
  claims: AccessTokenClaims;
  expiresAtMs: number;
}

const verifiedTokens = new WeakMap<Buffer, LRUCache<string, VerifiedToken>>();

function verifiedTokenCache(secret: Buffer): LRUCache<string, VerifiedToken> {
  let cache = verifiedTokens.get(secret);
  if (!cache) {
    cache = new LRUCache<string, VerifiedToken>({ max: VERIFIED_TOKEN_CACHE_SIZE });
    verifiedTokens.set(secret, cache);
  }
  return cache;
}

export type AccessTokenVerification = { ok: true; claims: AccessTokenClaims } | { ok: false; reason: AccessTokenFailure };

/**
 * Verifies signature (HS256 only: `alg: none` and other algorithms are refused), `exp`, `nbf`, `iss`
 * and `aud`, and the presence of every claim (RFC 7519 §7.2).
 *
 * A token that verified is remembered (bounded LRU per secret, keyed by the whole token string) until
 * its `exp`, so the next request with it skips the HMAC and the JSON decoding
 * (docs/performance.md). Only the signature check is cached: whether the token's session is still
 * live is read from the database on every request, so revocation is unaffected. A token that failed is
 * never cached, and a token is only found under its exact bytes, so nothing forged can hit the cache.
 * @returns the claims, or the failure reason.
 */
export function verifyAccessToken(token: string, secret: Buffer): AccessTokenVerification {
  const cache = verifiedTokenCache(secret);
  const cached = cache.get(token);
  if (cached) {
    if (Date.now() < cached.expiresAtMs) return { ok: true, claims: cached.claims };
    cache.delete(token);
    return { ok: false, reason: 'token_expired' };
  }
  const verification = verifyWithSignature(token, secret);
  if (!verification.ok) return verification;
  cache.set(token, { claims: verification.claims, expiresAtMs: verification.expiresAtMs });
  return { ok: true, claims: verification.claims };
}

function verifyWithSignature(token: string, secret: Buffer): (VerifiedToken & { ok: true }) | { ok: false; reason: AccessTokenFailure } {
  try {
    const payload = jwt.verify(token, hmacKey(secret), {
      algorithms: ['HS256'],
      issuer: ACCESS_TOKEN_ISSUER,
      audience: ACCESS_TOKEN_AUDIENCE,
    });
    if (typeof payload !== 'object' || payload === null) return { ok: false, reason: 'invalid_token' };
    const { sub, tid, sid, role, exp } = payload as Record<string, unknown>;
    if (
      typeof sub !== 'string' ||
      typeof tid !== 'string' ||
      typeof sid !== 'string' ||
      typeof exp !== 'number' ||
      (role !== 'Member' && role !== 'Admin')
    ) {
      return { ok: false, reason: 'invalid_token' };
    }
    return { ok: true, claims: { sub, tid, sid, role }, expiresAtMs: exp * 1000 };
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) return { ok: false, reason: 'token_expired' };
    return { ok: false, reason: 'invalid_token' };
  }
}
