import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { signAccessToken, verifyAccessToken, type AccessTokenClaims } from '../../src/security/access-token.js';

// The verified-token cache has no HTTP meaning of its own: these tests drive the verifier directly and
// check that remembering a verified token never accepts what a fresh verification would refuse.
const claims: AccessTokenClaims = { sub: 'user-1', tid: 'tenant-1', sid: 'session-1', role: 'Member' };

afterEach(() => {
  vi.useRealTimers();
});

describe('verified access-token cache', () => {
  it('accepts a token again after verifying it once, with the same claims', () => {
    const secret = randomBytes(32);
    const token = signAccessToken(claims, secret);
    expect(verifyAccessToken(token, secret)).toEqual({ ok: true, claims });
    expect(verifyAccessToken(token, secret)).toEqual({ ok: true, claims });
  });

  it('refuses a remembered token once its exp has passed', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const secret = randomBytes(32);
    const token = signAccessToken(claims, secret);
    expect(verifyAccessToken(token, secret).ok).toBe(true);
    vi.setSystemTime(Date.now() + 901_000);
    expect(verifyAccessToken(token, secret)).toEqual({ ok: false, reason: 'token_expired' });
    expect(verifyAccessToken(token, secret)).toEqual({ ok: false, reason: 'token_expired' });
  });

  it('does not let a token with the same claims but another signature ride on a remembered one', () => {
    const secret = randomBytes(32);
    const token = signAccessToken(claims, secret);
    expect(verifyAccessToken(token, secret).ok).toBe(true);
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${Buffer.alloc(32).toString('base64url')}`;
    expect(verifyAccessToken(forged, secret)).toEqual({ ok: false, reason: 'invalid_token' });
  });

  it('keeps what one secret verified away from another secret', () => {
    const secret = randomBytes(32);
    const token = signAccessToken(claims, secret);
    expect(verifyAccessToken(token, secret).ok).toBe(true);
    expect(verifyAccessToken(token, randomBytes(32))).toEqual({ ok: false, reason: 'invalid_token' });
  });

  it('does not remember a refusal: a token refused for an unknown secret still verifies under its own', () => {
    const secret = randomBytes(32);
    const token = signAccessToken(claims, secret);
    expect(verifyAccessToken(token, randomBytes(32)).ok).toBe(false);
    expect(verifyAccessToken(token, secret)).toEqual({ ok: true, claims });
  });
});
