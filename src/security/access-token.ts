import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
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

/**
 * Verifies signature (HS256 only: `alg: none` and other algorithms are refused), `exp`, `nbf`, `iss`
 * and `aud`, and the presence of every claim.
 * @returns the claims, or the failure reason.
 */
export function verifyAccessToken(
  token: string,
  secret: Buffer,
): { ok: true; claims: AccessTokenClaims } | { ok: false; reason: AccessTokenFailure } {
  try {
    const payload = jwt.verify(token, hmacKey(secret), {
      algorithms: ['HS256'],
      issuer: ACCESS_TOKEN_ISSUER,
      audience: ACCESS_TOKEN_AUDIENCE,
    });
    if (typeof payload !== 'object' || payload === null) return { ok: false, reason: 'invalid_token' };
    const { sub, tid, sid, role } = payload as Record<string, unknown>;
    if (
      typeof sub !== 'string' ||
      typeof tid !== 'string' ||
      typeof sid !== 'string' ||
      (role !== 'Member' && role !== 'Admin')
    ) {
      return { ok: false, reason: 'invalid_token' };
    }
    return { ok: true, claims: { sub, tid, sid, role } };
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) return { ok: false, reason: 'token_expired' };
    return { ok: false, reason: 'invalid_token' };
  }
}
