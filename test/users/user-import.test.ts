import type { EntityManager } from '@mikro-orm/postgresql';
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { passwordNeedsRehash } from '../../src/security/passwords.js';
import { issueApiKey } from '../helpers/principals.js';
import { useTestServer } from '../helpers/suite.js';
import { Authenticator } from '../helpers/totp.js';
import { FIREBASE_SAMPLE } from '../helpers/foreign-hashes.js';

/**
 * Moving users in (docs/import.md): POST users/import with foreign password hashes, sign-in with the
 * old password (then argon2id), GET users/export as NDJSON, through HTTP and through the service.
 */
const suite = useTestServer();

function em(): EntityManager {
  return suite.server.services.orm.em.fork() as EntityManager;
}

async function storedHash(tenantId: string, email: string): Promise<string | null> {
  const rows = await em().execute<{ password_hash: string | null }[]>('select password_hash from app_user where tenant_id = ? and email = ?', [tenantId, email]);
  return rows[0]!.password_hash;
}

async function importUsers(tenant: TestTenant, users: unknown[], token = tenant.accessToken) {
  return suite.api.post(`/v1/${tenant.slug}/users/import`, { users }, { token });
}

async function login(tenant: TestTenant, email: string, password: string, extra: Record<string, unknown> = {}) {
  return suite.api.post(`/v1/${tenant.slug}/auth/login`, { email, password, ...extra });
}

/** Imports one user with this password record and checks: old password signs in, then argon2id; a wrong one is refused. */
async function expectSignInMigrates(tenant: TestTenant, password: Record<string, unknown>, plaintext: string): Promise<void> {
  const email = `moved-${unique()}@example.com`;
  const res = await importUsers(tenant, [{ email, emailVerified: true, password }]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ created: 1, skipped: 0, errors: [] });
  const imported = await storedHash(tenant.id, email);
  expect(imported!.startsWith('{')).toBe(true);

  expectError(await login(tenant, email, `${plaintext}x`), 401, 'UNAUTHORIZED', 'invalid_credentials');
  expect(await storedHash(tenant.id, email)).toBe(imported);

  const ok = await login(tenant, email, plaintext);
  expect(ok.status, `${password.algorithm}: ${JSON.stringify(ok.body)}`).toBe(200);
  const rehashed = await storedHash(tenant.id, email);
  expect(rehashed!.startsWith('$argon2id$v=19$')).toBe(true);
  expect(passwordNeedsRehash(rehashed!)).toBe(false);
  expect(await argon2.verify(rehashed!, plaintext)).toBe(true);

  // The next sign-in verifies the argon2id hash; the foreign one is gone.
  expect((await login(tenant, email, plaintext)).status).toBe(200);
  expect(await storedHash(tenant.id, email)).toBe(rehashed);
  expectError(await login(tenant, email, `${plaintext}x`), 401, 'UNAUTHORIZED', 'invalid_credentials');
}

describe('POST users/import: each algorithm signs in with the old password, then argon2id', () => {
  it('bcrypt $2a$, $2b$, $2y$; argon2id and argon2i; scrypt; firebase-scrypt (published sample); Django pbkdf2_sha256; explicit pbkdf2', async () => {
    const tenant = await createTenant(suite.api);
    const b = bcrypt.hashSync('old bcrypt password', 4);
    await expectSignInMigrates(tenant, { algorithm: 'bcrypt', hash: b }, 'old bcrypt password');
    await expectSignInMigrates(tenant, { algorithm: 'bcrypt', hash: `$2a$${b.slice(4)}` }, 'old bcrypt password');
    await expectSignInMigrates(tenant, { algorithm: 'bcrypt', hash: '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a' }, 'rasmuslerdorf');
    await expectSignInMigrates(tenant, { algorithm: 'argon2', hash: await argon2.hash('old argon', { type: argon2.argon2id, memoryCost: 4096, timeCost: 2 }) }, 'old argon');
    await expectSignInMigrates(tenant, { algorithm: 'argon2', hash: await argon2.hash('old argon', { type: argon2.argon2i, memoryCost: 4096, timeCost: 3 }) }, 'old argon');
    await expectSignInMigrates(
      tenant,
      { algorithm: 'scrypt', N: 16384, r: 8, p: 1, salt: Buffer.from('NaCl-and-pepper').toString('base64'), hash: 'Xhj3ShAX31V3/B07fzXH67h2XBuRPA61/xu1ICvdwBc=' },
      'correct horse',
    );
    await expectSignInMigrates(tenant, { ...FIREBASE_SAMPLE }, 'user1password');
    await expectSignInMigrates(tenant, { algorithm: 'pbkdf2', hash: 'pbkdf2_sha256$600000$seasalt42$JyZCN5d9UuHdUV4P8rHIitcsP2aOuQf7CM52HraLS0g=' }, 'correct horse');
    await expectSignInMigrates(
      tenant,
      { algorithm: 'pbkdf2', digest: 'sha1', iterations: 4096, salt: Buffer.from('salt').toString('base64'), hash: Buffer.from('4b007901b765489abead49d926f721d065a429c1', 'hex').toString('base64') },
      'password',
    );
  });
});

describe('POST users/import: what is created, skipped and refused', () => {
  it('reports malformed users by index, skips existing addresses without touching them, and audits one UsersImported', async () => {
    const tenant = await createTenant(suite.api);
    const existing = await signupMember(suite.api, tenant.slug);
    const before = await storedHash(tenant.id, existing.email);
    const newcomer = `new-${unique()}@example.com`;
    const admin = `admin-${unique()}@example.com`;
    const res = await importUsers(tenant, [
      { email: existing.email.toUpperCase(), role: 'Admin', password: { algorithm: 'bcrypt', hash: bcrypt.hashSync('x', 4) } },
      { email: 'not an address' },
      { email: newcomer, password: { algorithm: 'md5', hash: '5f4dcc3b5aa765d61d8327deb882cf99' } },
      { email: newcomer, password: { algorithm: 'bcrypt', hash: '$2b$10$tooshort' } },
      { email: newcomer, password: { algorithm: 'scrypt', hash: 'AAAA', salt: 'AAAA', N: 1000, r: 8, p: 1 } },
      { email: newcomer, totpSecret: 'not-base32!' },
      { email: ` ${newcomer.toUpperCase()} ` },
      { email: newcomer },
      { email: admin, role: 'Admin', emailVerified: true },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      created: 2,
      skipped: 2,
      errors: [
        { index: 1, reason: 'invalid_email' },
        { index: 2, reason: 'unsupported_algorithm' },
        { index: 3, reason: 'malformed_hash' },
        { index: 4, reason: 'malformed_hash' },
        { index: 5, reason: 'invalid_totp_secret' },
      ],
    });
    // The existing user is untouched: same hash, still a Member.
    expect(await storedHash(tenant.id, existing.email)).toBe(before);
    const users = (await suite.api.get(`/v1/${tenant.slug}/users`, { token: tenant.accessToken })).body.items as { email: string; role: string; status: string }[];
    expect(users.find((u) => u.email === existing.email)).toMatchObject({ role: 'Member' });
    expect(users.find((u) => u.email === newcomer)).toMatchObject({ role: 'Member', status: 'Active' });
    expect(users.find((u) => u.email === admin)).toMatchObject({ role: 'Admin', status: 'Active' });
    const rows = await em().execute<{ email: string; imported_at: Date | null; email_verified_at: Date | null; password_hash: string | null }[]>(
      'select email, imported_at, email_verified_at, password_hash from app_user where tenant_id = ? order by email',
      [tenant.id],
    );
    expect(rows.filter((r) => r.imported_at !== null).map((r) => r.email).sort()).toEqual([admin, newcomer].sort());
    expect(rows.find((r) => r.email === admin)!.email_verified_at).not.toBeNull();
    expect(rows.find((r) => r.email === newcomer)!.email_verified_at).toBeNull();

    const audit = await em().execute<{ action: string; actor_id: string; details: Record<string, unknown> }[]>(
      `select action, actor_id, details from audit_event where tenant_id = ? and action = 'UsersImported'`,
      [tenant.id],
    );
    expect(audit).toEqual([{ action: 'UsersImported', actor_id: tenant.adminId, details: { via: 'request', total: 9, created: 2, skipped: 2, failed: 5 } }]);
  });

  it('keeps the TOTP secret (base32) so the authenticator keeps working', async () => {
    const tenant = await createTenant(suite.api);
    const email = `totp-${unique()}@example.com`;
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const res = await importUsers(tenant, [{ email, emailVerified: true, totpSecret: secret.toLowerCase(), password: { algorithm: 'bcrypt', hash: bcrypt.hashSync(PASSWORD, 4) } }]);
    expect(res.body).toEqual({ created: 1, skipped: 0, errors: [] });
    const authenticator = new Authenticator(secret);
    expectError(await login(tenant, email, PASSWORD), 401, 'UNAUTHORIZED', 'mfa_required');
    const ok = await login(tenant, email, PASSWORD, { totpCode: await authenticator.nextCode() });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('carries over custom data, the creation time and provider links; refuses malformed ones and a provider account someone holds', async () => {
    const tenant = await createTenant(suite.api);
    const issuer = 'https://login.old-system.example';
    const email = `carried-${unique()}@example.com`;
    const res = await importUsers(tenant, [
      { email, customData: { plan: 'pro', seats: 12 }, createdAt: '2019-04-01T08:30:00.000Z', providerLinks: [{ issuer, subject: 'u-1' }, { issuer, subject: 'u-1' }] },
      { email: `taken-in-batch-${unique()}@example.com`, providerLinks: [{ issuer, subject: 'u-1' }] },
      { email: `big-${unique()}@example.com`, customData: { blob: 'x'.repeat(5000) } },
      { email: `future-${unique()}@example.com`, createdAt: '2999-01-01T00:00:00Z' },
      { email: `garbled-${unique()}@example.com`, createdAt: 'last tuesday' },
      { email: `badlink-${unique()}@example.com`, providerLinks: [{ issuer: 'not a url', subject: 'x' }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      created: 1, skipped: 0,
      errors: [
        { index: 1, reason: 'provider_link_taken' }, { index: 2, reason: 'invalid_custom_data' }, { index: 3, reason: 'invalid_created_at' },
        { index: 4, reason: 'invalid_created_at' }, { index: 5, reason: 'invalid_provider_link' },
      ],
    });
    const users = (await suite.api.get(`/v1/${tenant.slug}/users?search=${encodeURIComponent(email)}`, { token: tenant.accessToken })).body.items as { id: string; createdAt: string; customData: unknown }[];
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ createdAt: '2019-04-01T08:30:00.000Z', customData: { plan: 'pro', seats: 12 } });
    const profile = await suite.api.get(`/v1/${tenant.slug}/users/${users[0]!.id}`, { token: tenant.accessToken });
    expect(profile.status, JSON.stringify(profile.body)).toBe(200);
    expect(profile.body.providerLinks).toEqual([expect.objectContaining({ issuer, subject: 'u-1', email })]);

    // a later import cannot give the same provider account to someone else
    const again = await importUsers(tenant, [{ email: `second-${unique()}@example.com`, providerLinks: [{ issuer, subject: 'u-1' }] }]);
    expect(again.body).toEqual({ created: 0, skipped: 0, errors: [{ index: 0, reason: 'provider_link_taken' }] });
    // another workspace keeps its own links
    const other = await createTenant(suite.api);
    expect((await importUsers(other, [{ email: `elsewhere-${unique()}@example.com`, providerLinks: [{ issuer, subject: 'u-1' }] }])).body).toEqual({ created: 1, skipped: 0, errors: [] });
  });

  it('refuses the 1,001st user (400), a Member (403 admin_required) and a test key (403 live_key_required)', async () => {
    const tenant = await createTenant(suite.api);
    const many = Array.from({ length: 1001 }, (_, i) => ({ email: `bulk-${i}-${unique()}@example.com` }));
    expectError(await importUsers(tenant, many), 400, 'BAD_REQUEST');
    const thousand = await importUsers(tenant, many.slice(0, 1000));
    expect(thousand.status, JSON.stringify(thousand.body).slice(0, 300)).toBe(200);
    expect(thousand.body).toMatchObject({ created: 1000, skipped: 0, errors: [] });

    const member = await signupMember(suite.api, tenant.slug);
    expectError(await importUsers(tenant, [{ email: `x-${unique()}@example.com` }], member.accessToken), 403, 'FORBIDDEN', 'admin_required');
    const testKey = await issueApiKey(suite.api, suite.server, tenant);
    expectError(await importUsers(tenant, [{ email: `x-${unique()}@example.com`, role: 'Admin' }], testKey.plaintext), 403, 'FORBIDDEN', 'live_key_required');
    expectError(await importUsers(tenant, [{ email: `x-${unique()}@example.com` }], ''), 401, 'UNAUTHORIZED');
  });

  it('an admin of another workspace cannot import into this one', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const res = await importUsers(tenant, [{ email: `x-${unique()}@example.com` }], other.accessToken);
    expect(res.status).toBe(401);
  });
});

describe('GET users/export', () => {
  it('streams every live user as NDJSON without secrets, and the lines import into a second workspace', async () => {
    const tenant = await createTenant(suite.api);
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const imported = await importUsers(tenant, [
      {
        email: `a-${unique()}@example.com`, emailVerified: true, role: 'Admin', totpSecret: secret, password: { algorithm: 'bcrypt', hash: bcrypt.hashSync('x', 4) },
        customData: { plan: 'pro' }, providerLinks: [{ issuer: 'https://login.example.com', subject: `sub-${unique()}` }], createdAt: '2021-03-04T05:06:07.000Z',
      },
      { email: `b-${unique()}@example.com` },
    ]);
    expect(imported.body.created).toBe(2);
    const res = await fetch(`${suite.server.url}/v1/${tenant.slug}/users/export`, { headers: { authorization: `Bearer ${tenant.accessToken}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="users-/);
    const text = await res.text();
    expect(text).not.toMatch(/\$2b\$|password|secret|argon2/i);
    const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(Object.keys(lines[0]!).sort()).toEqual([
      'createdAt', 'customData', 'email', 'emailVerified', 'id', 'importedAt', 'lastLoginAt', 'locale', 'name', 'picture', 'providerLinks', 'role', 'status', 'totpEnrolled',
    ]);
    // oldest first: the user created in 2021 by the import comes before the workspace's owner
    expect(lines[1]).toMatchObject({ id: tenant.adminId, importedAt: null, role: 'Admin' });
    // Users imported in one batch may share their creation time; read the lines by address, not by position.
    const importedLines = lines.filter((l) => l.importedAt !== null).sort((x, y) => String(x.email).localeCompare(String(y.email)));
    expect(importedLines.map((l) => [l.role, l.emailVerified, l.totpEnrolled, typeof l.importedAt])).toEqual([
      ['Admin', true, true, 'string'],
      ['Member', false, false, 'string'],
    ]);
    expect(importedLines[0]).toMatchObject({ customData: { plan: 'pro' }, providerLinks: [{ issuer: 'https://login.example.com' }], createdAt: '2021-03-04T05:06:07.000Z' });
    expect(importedLines[1]).toMatchObject({ customData: {}, providerLinks: [] });

    // the lines, as they are, import into a second workspace and carry what the first one knew
    const second = await createTenant(suite.api);
    const copy = lines;
    expect((await importUsers(second, copy)).body).toEqual({ created: 3, skipped: 0, errors: [] });
    const reExported = (await (await fetch(`${suite.server.url}/v1/${second.slug}/users/export`, { headers: { authorization: `Bearer ${second.accessToken}` } })).text())
      .trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const carried = reExported.find((l) => l.email === importedLines[0]!.email)!;
    expect(carried).toMatchObject({ customData: { plan: 'pro' }, providerLinks: importedLines[0]!.providerLinks, createdAt: '2021-03-04T05:06:07.000Z', role: 'Admin' });
    expect((await importUsers(second, copy)).body).toEqual({ created: 0, skipped: 3, errors: [] });
    const copied = (await suite.api.get(`/v1/${second.slug}/users`, { token: second.accessToken })).body.items as { email: string; role: string; status: string }[];
    expect(copied.map((u) => [u.email, u.role]).sort()).toEqual([...lines.map((l) => [l.email, l.role]), [second.adminEmail, 'Admin']].sort() as string[][]);

    const member = await signupMember(suite.api, tenant.slug);
    expectError(await suite.api.get(`/v1/${tenant.slug}/users/export`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
  });
});

describe('UserImportService below HTTP', () => {
  it('imports a batch in the caller\'s transaction and exports across batch boundaries', async () => {
    const apiTenant = await createTenant(suite.api);
    const services = suite.server.services;
    const tenant = (await em().execute<Record<string, unknown>[]>('select * from tenant where id = ?', [apiTenant.id]))[0]!;
    const tenantValue = { id: apiTenant.id, requireEmailVerification: tenant.require_email_verification } as Parameters<typeof services.userImport.importBatch>[1];
    const emails = Array.from({ length: 7 }, (_, i) => `svc-${i}-${unique()}@example.com`);
    const outcome = await em().transactional((tx) =>
      services.userImport.importBatch(tx, tenantValue, [...emails.map((email) => ({ email })), { email: emails[0] }, 'not an object'], 100),
    );
    expect(outcome).toEqual({ created: 7, skipped: 1, errors: [{ index: 108, reason: 'invalid_user' }] });
    const chunks: string[] = [];
    const count = await services.userImport.exportUsers(em(), apiTenant.id, { write: async (chunk) => void chunks.push(chunk) }, 3);
    expect(count).toBe(8);
    expect(chunks).toHaveLength(3);
    const exported = chunks.join('').trimEnd().split('\n').map((l) => (JSON.parse(l) as { email: string }).email);
    expect(new Set(exported).size).toBe(8);
    expect(exported.slice(1).sort()).toEqual([...emails].sort());
  });
});
