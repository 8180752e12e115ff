import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { claimsOf, issueApiKey, signWithTestSecret } from '../helpers/principals.js';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from '../helpers/server.js';

/**
 * Attacks on the access token (RFC 7519, RFC 8725 "JWT Best Current Practices", OWASP ASVS V9):
 * every forged, altered, expired or misaddressed token is refused with 401 and nothing else.
 */

let server: TestServer;
let api: Api;
let tenant: TestTenant;
let other: TestTenant;
let memberId: string;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
  tenant = await createTenant(api);
  other = await createTenant(api);
  memberId = (await signupMember(api, tenant.slug)).id;
});
afterAll(async () => {
  await server.close();
});

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function parts(token: string): { header: Record<string, unknown>; payload: Record<string, unknown>; signature: string } {
  const [h, p, s] = token.split('.');
  return { header: JSON.parse(Buffer.from(h!, 'base64url').toString()), payload: JSON.parse(Buffer.from(p!, 'base64url').toString()), signature: s! };
}

/** A JWS compact token with any header, payload and an HMAC-SHA256 over them with `key`. */
function hmacToken(header: Record<string, unknown>, payload: Record<string, unknown>, key: Buffer | string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

async function expectRefused(token: string, reason: string): Promise<void> {
  const res = await api.get(`/v1/${tenant.slug}/me`, { token });
  expectError(res, 401, 'UNAUTHORIZED', reason);
}

describe('access-token attacks', () => {
  it('accepts the genuine token (control)', async () => {
    const res = await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
  });

  it('refuses alg "none" with an empty signature', async () => {
    const { payload } = parts(tenant.accessToken);
    await expectRefused(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`, 'invalid_token');
  });

  it('refuses alg "none" (any case) carrying the original signature', async () => {
    const { payload, signature } = parts(tenant.accessToken);
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      await expectRefused(`${b64({ alg, typ: 'JWT' })}.${b64(payload)}.${signature}`, 'invalid_token');
    }
  });

  it('refuses an RS256 token signed with an attacker key', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const { payload } = parts(tenant.accessToken);
    await expectRefused(jwt.sign(payload, privateKey, { algorithm: 'RS256', noTimestamp: true }), 'invalid_token');
  });

  it('refuses HS/RS confusion: an RS256 header over an HMAC made with a public key', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const { payload } = parts(tenant.accessToken);
    await expectRefused(hmacToken({ alg: 'RS256', typ: 'JWT' }, payload, pem), 'invalid_token');
    await expectRefused(hmacToken({ alg: 'HS256', typ: 'JWT' }, payload, pem), 'invalid_token');
  });

  it('refuses HS256 signed with the wrong key, an empty key, or a prefix of the right key', async () => {
    const { payload } = parts(tenant.accessToken);
    for (const key of ['wrong-secret-wrong-secret-wrong-secret!', '', TEST_JWT_SECRET.slice(0, 32)]) {
      await expectRefused(hmacToken({ alg: 'HS256', typ: 'JWT' }, payload, key), 'invalid_token');
    }
  });

  it('refuses other HMAC algorithms even with the right key (algorithm pinned to HS256)', async () => {
    const { payload } = parts(tenant.accessToken);
    for (const algorithm of ['HS384', 'HS512'] as const) {
      await expectRefused(jwt.sign(payload, TEST_JWT_SECRET, { algorithm, noTimestamp: true }), 'invalid_token');
    }
  });

  it('refuses tampered claims kept under the original signature', async () => {
    const { header, payload, signature } = parts(tenant.accessToken);
    const tampered = [
      { ...payload, role: 'Admin', sub: memberId },
      { ...payload, tid: other.id },
      { ...payload, exp: (payload.exp as number) + 86_400 },
      { ...payload, sid: randomUUID() },
    ];
    for (const claims of tampered) await expectRefused(`${b64(header)}.${b64(claims)}.${signature}`, 'invalid_token');
    await expectRefused(`${b64({ ...header, kid: '../../etc/passwd' })}.${b64(payload)}.${signature}`, 'invalid_token');
    await expectRefused(`${b64(header)}.${b64(payload)}.${signature.slice(0, -2)}AA`, 'invalid_token');
  });

  it('refuses an expired token (exp in the past) with token_expired', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(signWithTestSecret(claimsOf(tenant.accessToken), { iat: now - 1000, exp: now - 1 }), 'token_expired');
  });

  it('refuses a token not yet valid (nbf in the future)', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(signWithTestSecret(claimsOf(tenant.accessToken), { nbf: now + 600 }), 'invalid_token');
  });

  it('refuses a wrong or missing issuer or audience', async () => {
    const claims = claimsOf(tenant.accessToken);
    for (const overrides of [{ iss: 'https://evil.example' }, { iss: undefined }, { aud: 'another-api' }, { aud: undefined }, { aud: ['another-api'] }]) {
      await expectRefused(signWithTestSecret(claims, overrides), 'invalid_token');
    }
  });

  it('refuses a token missing a required claim or with an unknown role', async () => {
    const claims = claimsOf(tenant.accessToken);
    for (const overrides of [{ sub: undefined }, { tid: undefined }, { sid: undefined }, { role: 'Owner' }, { role: undefined }]) {
      await expectRefused(signWithTestSecret(claims, overrides), 'invalid_token');
    }
  });

  it('refuses a token of another tenant with tenant_mismatch', async () => {
    await expectRefused(other.accessToken, 'tenant_mismatch');
    // Validly signed, claiming this tenant's id but another tenant's user and session: no session matches.
    await expectRefused(signWithTestSecret({ ...claimsOf(other.accessToken), tid: tenant.id }), 'session_revoked');
  });

  it('refuses a validly signed token whose session does not exist or belongs to another user', async () => {
    const claims = claimsOf(tenant.accessToken);
    await expectRefused(signWithTestSecret({ ...claims, sid: randomUUID() }), 'session_revoked');
    await expectRefused(signWithTestSecret({ ...claims, sub: memberId }), 'session_revoked');
  });

  it('refuses a refresh token, an unknown API key and garbage presented as bearer tokens', async () => {
    await expectRefused(tenant.refreshToken, 'invalid_token');
    await expectRefused(`ak_live_${'A'.repeat(40)}`, 'invalid_token');
    await expectRefused('a.b.c', 'invalid_token');
    await expectRefused('eyJhbGciOiJIUzI1NiJ9', 'invalid_token');
  });

  it('refuses malformed Authorization headers', async () => {
    for (const authorization of ['', 'Bearer', 'Bearer ', `Basic ${b64('a:b')}`, `Token ${tenant.accessToken}`, `Bearer ${'x'.repeat(5000)}`, `Bearer ${tenant.accessToken} extra`]) {
      const res = await api.get(`/v1/${tenant.slug}/me`, { headers: { authorization } });
      expectError(res, 401, 'UNAUTHORIZED');
    }
  });
});

describe('ended sessions fail at once (OWASP ASVS 7.4)', () => {
  it('refuses the tokens of a user who deleted their account', async () => {
    const member = await signupMember(api, tenant.slug);
    expect((await api.delete(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expect((await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken })).status).toBe(401);
  });

  it('ends the other sessions after a password change, keeping the one that changed it', async () => {
    const member = await signupMember(api, tenant.slug);
    const other = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(other.status).toBe(200);
    const changed = await api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword: `${PASSWORD} v2` }, { token: member.accessToken });
    expect(changed.status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: other.body.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
  });

  it('refuses every token of a session once logout-all ran', async () => {
    const member = await signupMember(api, tenant.slug);
    const res = await api.post(`/v1/${tenant.slug}/auth/logout-all`, undefined, { token: member.accessToken });
    expect(res.status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
  });
});

describe('API keys as bearer credentials', () => {
  it('keep working after their first use has been recorded, and stop at once when expired or revoked', async () => {
    const key = await issueApiKey(api, server, tenant);
    const route = `/v1/${tenant.slug}/me`;
    // On a user-only route an API key is a known key refused with user_token_required, never a 500.
    expectError(await api.get(route, { token: key.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    const em = server.services.orm.em.fork();
    for (let i = 0; i < 50; i++) {
      const [row] = (await em.execute('select last_used_at from api_key where id = ?', [key.id])) as { last_used_at: unknown }[];
      if (row?.last_used_at) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expectError(await api.get(route, { token: key.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    await em.execute('update api_key set expires_at = ? where id = ?', [new Date(Date.now() - 1000), key.id]);
    expectError(await api.get(route, { token: key.plaintext }), 401, 'UNAUTHORIZED', 'api_key_expired');
    await em.execute('update api_key set expires_at = null, revoked_at = now() where id = ?', [key.id]);
    expectError(await api.get(route, { token: key.plaintext }), 401, 'UNAUTHORIZED', 'api_key_revoked');
  });

  it('is refused on another tenant with tenant_mismatch', async () => {
    const key = await issueApiKey(api, server, tenant);
    expectError(await api.get(`/v1/${other.slug}/me`, { token: key.plaintext }), 401, 'UNAUTHORIZED', 'tenant_mismatch');
  });
});
