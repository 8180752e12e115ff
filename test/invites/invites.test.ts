import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const PUBLIC_URL = 'https://id.example.test';

const suite = useTestServer({ smtp: true, env: { PUBLIC_URL } });

async function invite(tenant: TestTenant, body: Record<string, unknown>) {
  const res = await suite.api.post(`/v1/${tenant.slug}/invites`, body, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { token: string; invite: Record<string, any> };
}

/** Moves an invite's expiry into the past, as if its lifetime had run out. */
async function backdate(inviteId: string): Promise<void> {
  await suite.server.services.orm.em.fork().execute(`update invite set expires_at = now() - interval '1 second' where id = ?`, [inviteId]);
}

async function actions(tenant: TestTenant, action: string) {
  const res = await suite.api.get(`/v1/${tenant.slug}/audit?action=${action}`, { token: tenant.accessToken });
  expect(res.status).toBe(200);
  return res.body.items as Record<string, any>[];
}

describe('POST /v1/{tenantSlug}/invites', () => {
  it('creates an open Member invite for 7 days, mails PUBLIC_URL + token, and returns the token once', async () => {
    const tenant = await createTenant(suite.api);
    const email = `Invitee-${unique()}@Example.com`;
    const before = Date.now();
    const { token, invite: created } = await invite(tenant, { email });
    expect(token.length).toBeGreaterThanOrEqual(43);
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'email', 'expiresAt', 'id', 'invitedBy', 'role', 'status']);
    expect(created).toMatchObject({ email: email.toLowerCase(), role: 'Member', status: 'Open', invitedBy: tenant.adminId });
    const ttl = (Date.parse(created.expiresAt) - Date.parse(created.createdAt)) / 1000;
    expect(ttl).toBe(604800);
    expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before - 1000);

    const mail = await suite.sink.waitFor(email);
    expect(mail.text).toContain(`${PUBLIC_URL}/app/${tenant.slug}/accept-invite?token=${encodeURIComponent(token)}`);
    expect(mail.html).toContain(PUBLIC_URL);

    const listed = await suite.api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken });
    expect(listed.body.items).toEqual([created]);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(suite.server.logs.join('\n')).not.toContain(token);
  });

  it('honours role and ttlSeconds', async () => {
    const tenant = await createTenant(suite.api);
    const { invite: created } = await invite(tenant, { email: `a-${unique()}@example.com`, role: 'Admin', ttlSeconds: 300 });
    expect(created.role).toBe('Admin');
    expect((Date.parse(created.expiresAt) - Date.parse(created.createdAt)) / 1000).toBe(300);
  });

  it.each([
    ['ttlSeconds below 300', { ttlSeconds: 299 }],
    ['ttlSeconds above 2592000', { ttlSeconds: 2592001 }],
    ['ttlSeconds not an integer', { ttlSeconds: 400.5 }],
    ['unknown role', { role: 'Owner' }],
  ])('answers 400 for %s', async (_label, extra) => {
    const tenant = await createTenant(suite.api);
    const res = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: `b-${unique()}@example.com`, ...extra }, { token: tenant.accessToken });
    expectError(res, 400, 'BAD_REQUEST');
  });

  it('answers 400 for a bad email and 409 for the email of a live user', async () => {
    const tenant = await createTenant(suite.api);
    expectError(await suite.api.post(`/v1/${tenant.slug}/invites`, { email: 'nope' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    const res = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: tenant.adminEmail.toUpperCase() }, { token: tenant.accessToken });
    expectError(res, 409, 'CONFLICT', 'email_taken');
  });

  it('a new invite to the same email supersedes the open one', async () => {
    const tenant = await createTenant(suite.api);
    const email = `again-${unique()}@example.com`;
    const first = await invite(tenant, { email });
    const second = await invite(tenant, { email });
    expectError(await suite.api.post('/v1/invites/accept', { token: first.token, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invite_invalid');
    const listed = await suite.api.get(`/v1/${tenant.slug}/invites?includeRevoked=true`, { token: tenant.accessToken });
    const statuses = Object.fromEntries((listed.body.items as any[]).map((i) => [i.id, i.status]));
    expect(statuses).toEqual({ [first.invite.id]: 'Revoked', [second.invite.id]: 'Open' });
    expect((await suite.api.post('/v1/invites/accept', { token: second.token, password: PASSWORD })).status).toBe(200);
  });
});

describe('POST /v1/{tenantSlug}/invites with Idempotency-Key', () => {
  const post = (tenant: TestTenant, body: Record<string, unknown>, key: string, token = tenant.accessToken) =>
    suite.api.post(`/v1/${tenant.slug}/invites`, body, { token, headers: { 'Idempotency-Key': key } });

  async function openAndRevoked(tenant: TestTenant) {
    const res = await suite.api.get(`/v1/${tenant.slug}/invites?includeRevoked=true`, { token: tenant.accessToken });
    return res.body.items as Record<string, any>[];
  }

  it('answers a retry with the same key and body with the first answer: one invite, one mail, one InviteCreated', async () => {
    const tenant = await createTenant(suite.api);
    const email = `retry-${unique()}@example.com`;
    const key = `invite-${unique()}`;
    const first = await post(tenant, { email, role: 'Admin' }, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await suite.sink.waitFor(email);
    // the same request as it takes effect: the address in other case, the default lifetime spelled out
    const again = await post(tenant, { email: email.toUpperCase(), role: 'Admin', ttlSeconds: 604800 }, key);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual(first.body);

    expect((await openAndRevoked(tenant)).map((i) => [i.id, i.status])).toEqual([[first.body.invite.id, 'Open']]);
    expect(await actions(tenant, 'InviteCreated')).toHaveLength(1);
    expect(await actions(tenant, 'InviteRevoked')).toEqual([]);
    // (that no second mail is queued is asserted below HTTP, in invite-idempotency.service.test.ts)
    expect((await suite.api.post('/v1/invites/accept', { token: again.body.token, password: PASSWORD })).status).toBe(200);
  });

  it('answers 409 idempotency_key_reused for the same key with another body, and changes nothing', async () => {
    const tenant = await createTenant(suite.api);
    const email = `other-${unique()}@example.com`;
    const key = `invite-${unique()}`;
    const first = await post(tenant, { email }, key);
    expect(first.status).toBe(200);
    for (const body of [{ email: `else-${unique()}@example.com` }, { email, role: 'Admin' }, { email, ttlSeconds: 300 }]) {
      expectError(await post(tenant, body, key), 409, 'CONFLICT', 'idempotency_key_reused');
    }
    expect((await openAndRevoked(tenant)).map((i) => [i.id, i.status])).toEqual([[first.body.invite.id, 'Open']]);
    expect(await actions(tenant, 'InviteCreated')).toHaveLength(1);
  });

  it('keeps keys apart per caller, treats another key as a new invite, and answers 400 for a malformed key', async () => {
    const tenant = await createTenant(suite.api);
    const email = `keys-${unique()}@example.com`;
    const key = `invite-${unique()}`;
    const first = await post(tenant, { email }, key);
    const apiKey = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'ci', environment: 'live' }, { token: tenant.accessToken });
    const byKey = await post(tenant, { email: `else-${unique()}@example.com` }, key, apiKey.body.plaintext);
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(200);
    const second = await post(tenant, { email }, `invite-${unique()}`);
    expect(second.status).toBe(200);
    expect(new Set([first.body.invite.id, byKey.body.invite.id, second.body.invite.id]).size).toBe(3);
    // a new invitation to the same pending address (another key, or none) supersedes the open one, as without keys
    const statuses = Object.fromEntries((await openAndRevoked(tenant)).map((i) => [i.id, i.status]));
    expect(statuses[first.body.invite.id]).toBe('Revoked');
    expect(statuses[second.body.invite.id]).toBe('Open');

    for (const bad of ['', 'x'.repeat(256), 'with space']) {
      expectError(await post(tenant, { email: `bad-${unique()}@example.com` }, bad), 400, 'BAD_REQUEST', 'invalid_idempotency_key');
    }
    expect(await actions(tenant, 'InviteCreated')).toHaveLength(3);
  });
});

describe('POST /v1/{tenantSlug}/invites/{id}/resend with Idempotency-Key', () => {
  const resend = (tenant: TestTenant, inviteId: string, key?: string) =>
    suite.api.post(`/v1/${tenant.slug}/invites/${inviteId}/resend`, undefined, {
      token: tenant.accessToken, ...(key === undefined ? {} : { headers: { 'Idempotency-Key': key } }),
    });

  /** The invite mails queued for `email` so far (the mailer logs each as it queues it, in the request). */
  const mailsQueuedTo = (email: string) =>
    suite.server.logs.filter((line) => line.includes('"mail queued"') && line.includes(`"to":"${email}"`)).length;

  async function invitesTo(tenant: TestTenant, email: string) {
    const res = await suite.api.get(`/v1/${tenant.slug}/invites?includeRevoked=true`, { token: tenant.accessToken });
    return (res.body.items as Record<string, any>[]).filter((i) => i.email === email).map((i) => [i.id, i.status]);
  }

  it('answers a retry of a resend (its invite now revoked) with the first resend\'s invite and token: one new invite, one mail', async () => {
    const tenant = await createTenant(suite.api);
    const email = `resend-retry-${unique()}@example.com`;
    const original = await invite(tenant, { email, role: 'Admin' });
    const key = `resend-${unique()}`;
    const first = await resend(tenant, original.invite.id, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.invite.id).not.toBe(original.invite.id);
    await suite.sink.waitFor(email, (m) => m.text.includes(encodeURIComponent(first.body.token as string)));
    expect(mailsQueuedTo(email)).toBe(2);

    const again = await resend(tenant, original.invite.id.toUpperCase(), key);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(mailsQueuedTo(email)).toBe(2);
    expect(await invitesTo(tenant, email)).toEqual([[first.body.invite.id, 'Open'], [original.invite.id, 'Revoked']]);
    expect(await actions(tenant, 'InviteCreated')).toHaveLength(2);
    expect(await actions(tenant, 'InviteRevoked')).toHaveLength(1);
    expect(suite.sink.messages.filter((m) => m.to.includes(email))).toHaveLength(2);
    expect((await suite.api.post('/v1/invites/accept', { token: again.body.token, password: PASSWORD })).status).toBe(200);
  });

  it('answers 409 idempotency_key_reused for the key on another invite\'s resend or of a POST invites, and changes nothing', async () => {
    const tenant = await createTenant(suite.api);
    const a = await invite(tenant, { email: `resend-a-${unique()}@example.com` });
    const b = await invite(tenant, { email: `resend-b-${unique()}@example.com` });
    const key = `resend-${unique()}`;
    const first = await resend(tenant, a.invite.id, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expectError(await resend(tenant, b.invite.id, key), 409, 'CONFLICT', 'idempotency_key_reused');
    expectError(await resend(tenant, first.body.invite.id, key), 409, 'CONFLICT', 'idempotency_key_reused');
    expectError(
      await suite.api.post(`/v1/${tenant.slug}/invites`, { email: a.invite.email }, { token: tenant.accessToken, headers: { 'Idempotency-Key': key } }),
      409, 'CONFLICT', 'idempotency_key_reused',
    );

    // a key of POST invites is refused on a resend, even of the invite it created
    const createKey = `invite-${unique()}`;
    const created = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: `resend-c-${unique()}@example.com` }, {
      token: tenant.accessToken, headers: { 'Idempotency-Key': createKey },
    });
    expect(created.status).toBe(200);
    expectError(await resend(tenant, created.body.invite.id, createKey), 409, 'CONFLICT', 'idempotency_key_reused');
    expectError(await resend(tenant, b.invite.id, createKey), 409, 'CONFLICT', 'idempotency_key_reused');

    const statuses = Object.fromEntries((await suite.api.get(`/v1/${tenant.slug}/invites?includeRevoked=true`, { token: tenant.accessToken }))
      .body.items.map((i: any) => [i.id, i.status]));
    expect(statuses).toEqual({
      [a.invite.id]: 'Revoked', [first.body.invite.id]: 'Open', [b.invite.id]: 'Open', [created.body.invite.id]: 'Open',
    });
    expect(await actions(tenant, 'InviteCreated')).toHaveLength(4);
  });

  it('answers 400 invalid_idempotency_key for a malformed key; without a key a second resend of the same invite is 409 invite_not_open', async () => {
    const tenant = await createTenant(suite.api);
    const email = `resend-nokey-${unique()}@example.com`;
    const original = await invite(tenant, { email });
    for (const bad of ['', 'x'.repeat(256), 'with space']) {
      expectError(await resend(tenant, original.invite.id, bad), 400, 'BAD_REQUEST', 'invalid_idempotency_key');
    }
    expect(await invitesTo(tenant, email)).toEqual([[original.invite.id, 'Open']]);

    const first = await resend(tenant, original.invite.id);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expectError(await resend(tenant, original.invite.id), 409, 'CONFLICT', 'invite_not_open');
    expect(await invitesTo(tenant, email)).toEqual([[first.body.invite.id, 'Open'], [original.invite.id, 'Revoked']]);
  });

  it('documents the header, 400 invalid_idempotency_key and 409 idempotency_key_reused in the OpenAPI document', async () => {
    const doc = (await suite.api.get('/v1/openapi.json')).body;
    const operation = doc.paths['/v1/{tenantSlug}/invites/{id}/resend'].post;
    expect(operation.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'Idempotency-Key' }));
    const reasons = (status: number) => operation.responses[String(status)].content['application/json'].schema.properties.details.properties.reason.enum;
    expect(reasons(400)).toContain('invalid_idempotency_key');
    expect(reasons(409)).toEqual(expect.arrayContaining(['invite_not_open', 'email_taken', 'idempotency_key_reused']));
  });
});

describe('POST /v1/invites/accept', () => {
  it('creates the Active user with the invite role, returns a session with tenantSlug, and the user can sign in', async () => {
    const tenant = await createTenant(suite.api);
    const email = `new-${unique()}@example.com`;
    const { token, invite: created } = await invite(tenant, { email, role: 'Admin' });
    const res = await suite.api.post('/v1/invites/accept', { token, password: PASSWORD });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.tenantSlug).toBe(tenant.slug);
    expect(res.body.user).toMatchObject({ email, role: 'Admin', status: 'Active' });
    expect(res.body.accessTokenExpiresIn).toBe(900);
    expect(res.body.refreshTokenExpiresIn).toBe(2592000);

    const me = await suite.api.get(`/v1/${tenant.slug}/me`, { token: res.body.accessToken });
    expect(me.body).toMatchObject({ email, role: 'Admin', status: 'Active', emailVerified: true });
    const login = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD });
    expect(login.status).toBe(200);

    // Accepted invites are listed only on request, and the token is spent.
    const open = await suite.api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken });
    expect(open.body.items).toEqual([]);
    const all = await suite.api.get(`/v1/${tenant.slug}/invites?includeAccepted=true`, { token: tenant.accessToken });
    expect(all.body.items).toEqual([{ ...created, status: 'Accepted' }]);
    expectError(await suite.api.post('/v1/invites/accept', { token, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invite_invalid');

    const accepted = await actions(tenant, 'InviteAccepted');
    expect(accepted).toHaveLength(1);
    expect(accepted[0]).toMatchObject({ actorType: 'user', actorId: res.body.user.id, targetType: 'invite', targetId: created.id });
    const signups = await actions(tenant, 'UserSignup');
    expect(signups[0]).toMatchObject({ targetId: res.body.user.id, details: { via: 'invite', email } });
    const sessions = await actions(tenant, 'SessionCreated');
    expect(sessions.some((e) => e.actorId === res.body.user.id)).toBe(true);
  });

  it('answers 401 invite_invalid for an unknown token and 400 for a short password', async () => {
    expectError(await suite.api.post('/v1/invites/accept', { token: 'nope', password: PASSWORD }), 401, 'UNAUTHORIZED', 'invite_invalid');
    const tenant = await createTenant(suite.api);
    const { token } = await invite(tenant, { email: `s-${unique()}@example.com` });
    expectError(await suite.api.post('/v1/invites/accept', { token, password: 'x'.repeat(11) }), 400, 'BAD_REQUEST');
    expectError(await suite.api.post('/v1/invites/accept', { token: '', password: PASSWORD }), 400, 'BAD_REQUEST');
    expectError(await suite.api.post('/v1/invites/accept', { token: 't'.repeat(1025), password: PASSWORD }), 400, 'BAD_REQUEST');
  });

  it('answers 409 when the email became a user of the tenant meanwhile', async () => {
    const tenant = await createTenant(suite.api);
    const email = `race-${unique()}@example.com`;
    const { token } = await invite(tenant, { email });
    await signupMember(suite.api, tenant.slug, email);
    expectError(await suite.api.post('/v1/invites/accept', { token, password: PASSWORD }), 409, 'CONFLICT', 'email_taken');
  });

  it('an expired invite answers 401 invite_expired, is listed as Expired and emits InviteExpired once', async () => {
    const tenant = await createTenant(suite.api);
    const email = `late-${unique()}@example.com`;
    const { token, invite: created } = await invite(tenant, { email });
    await backdate(created.id);
    expectError(await suite.api.post('/v1/invites/accept', { token, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invite_expired');
    expectError(await suite.api.post('/v1/invites/accept', { token, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invite_expired');
    const listed = await suite.api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken });
    expect(listed.body.items).toEqual([{ ...created, status: 'Expired', expiresAt: expect.any(String) }]);
    const expired = await actions(tenant, 'InviteExpired');
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ actorType: 'system', targetType: 'invite', targetId: created.id, details: { email } });
  });

  it('listing marks overdue invites Expired', async () => {
    const tenant = await createTenant(suite.api);
    const { invite: created } = await invite(tenant, { email: `l-${unique()}@example.com` });
    await backdate(created.id);
    const listed = await suite.api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken });
    expect(listed.body.items.map((i: any) => i.status)).toEqual(['Expired']);
    expect(await actions(tenant, 'InviteExpired')).toHaveLength(1);
  });

  it('concurrent acceptances of one token create exactly one user', async () => {
    const tenant = await createTenant(suite.api);
    const { token } = await invite(tenant, { email: `twice-${unique()}@example.com` });
    const results = await Promise.all([1, 2, 3].map(() => suite.api.post('/v1/invites/accept', { token, password: PASSWORD })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401]);
    const users = await suite.api.get(`/v1/${tenant.slug}/users`, { token: tenant.accessToken });
    expect(users.body.items).toHaveLength(2);
  });
});

describe('GET and DELETE /v1/{tenantSlug}/invites', () => {
  it('revokes an open invite: the token fails, it is listed only with includeRevoked, InviteRevoked is audited', async () => {
    const tenant = await createTenant(suite.api);
    const { token, invite: created } = await invite(tenant, { email: `r-${unique()}@example.com` });
    const res = await suite.api.delete(`/v1/${tenant.slug}/invites/${created.id}`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expectError(await suite.api.post('/v1/invites/accept', { token, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invite_invalid');
    expect((await suite.api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken })).body.items).toEqual([]);
    const withRevoked = await suite.api.get(`/v1/${tenant.slug}/invites?includeRevoked=true&includeAccepted=false`, { token: tenant.accessToken });
    expect(withRevoked.body.items).toEqual([{ ...created, status: 'Revoked' }]);
    const revoked = await actions(tenant, 'InviteRevoked');
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({ actorType: 'user', actorId: tenant.adminId, targetId: created.id });
    // Again: no change, no second event.
    expect((await suite.api.delete(`/v1/${tenant.slug}/invites/${created.id}`, { token: tenant.accessToken })).status).toBe(200);
    expect(await actions(tenant, 'InviteRevoked')).toHaveLength(1);
  });

  it('refuses to revoke an accepted invite (409) and answers 404 for unknown ids and other tenants', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const { token, invite: created } = await invite(tenant, { email: `x-${unique()}@example.com` });
    expectError(await suite.api.delete(`/v1/${other.slug}/invites/${created.id}`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.delete(`/v1/${tenant.slug}/invites/not-a-uuid`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.delete(`/v1/${tenant.slug}/invites/00000000-0000-4000-8000-000000000000`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expect((await suite.api.post('/v1/invites/accept', { token, password: PASSWORD })).status).toBe(200);
    expectError(await suite.api.delete(`/v1/${tenant.slug}/invites/${created.id}`, { token: tenant.accessToken }), 409, 'CONFLICT', 'invite_not_open');
  });

  it('lists newest first and answers 400 for a non-boolean flag', async () => {
    const tenant = await createTenant(suite.api);
    const a = await invite(tenant, { email: `1-${unique()}@example.com` });
    const b = await invite(tenant, { email: `2-${unique()}@example.com` });
    const listed = await suite.api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken });
    expect(listed.body.items.map((i: any) => i.id)).toEqual([b.invite.id, a.invite.id]);
    expectError(await suite.api.get(`/v1/${tenant.slug}/invites?includeRevoked=maybe`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });

  it('an invite created by an API key names the key as invitedBy and the key as actor', async () => {
    const tenant = await createTenant(suite.api);
    const key = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'ci', environment: 'test' }, { token: tenant.accessToken });
    const res = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: `k-${unique()}@example.com` }, { token: key.body.plaintext });
    expect(res.status).toBe(200);
    expect(res.body.invite.invitedBy).toBe(key.body.apiKey.id);
    const created = await actions(tenant, 'InviteCreated');
    expect(created[0]).toMatchObject({ actorType: 'api_key', actorId: key.body.apiKey.id });
  });
});
