import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { AuditDailyCountSchema } from '../../src/entities/audit-daily-count.js';
import { useTestServer } from '../helpers/suite.js';
import { Authenticator } from '../helpers/totp.js';

const suite = useTestServer();

async function activity(tenant: TestTenant) {
  const res = await suite.api.get(`/v1/${tenant.slug}/audit/activity`, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Record<string, any>;
}

describe('GET /v1/{tenantSlug}/audit/activity', () => {
  it('counts today\'s sign-ins, failed sign-ins and sign-ups of the own tenant, with 30 UTC days present', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    await signupMember(suite.api, other.slug);
    for (let i = 0; i < 2; i++) expect((await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD })).status).toBe(200);
    expect((await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'not the password at all' })).status).toBe(401);
    expect((await suite.api.post(`/v1/${other.slug}/auth/login`, { email: other.adminEmail, password: PASSWORD })).status).toBe(200);

    const body = await activity(tenant);
    const today = new Date().toISOString().slice(0, 10);
    expect(body.to).toBe(today);
    for (const series of ['signIns', 'failedSignIns', 'signUps']) {
      expect(body[series]).toHaveLength(30);
      expect(body[series][0].date).toBe(body.from);
      expect(body[series].at(-1).date).toBe(today);
    }
    expect(body.signIns.at(-1).count).toBe(2);
    expect(body.failedSignIns.at(-1).count).toBe(1);
    // The workspace's first admin and the member.
    expect(body.signUps.at(-1).count).toBe(2);
    expect(body.signIns.slice(0, -1).every((d: { count: number }) => d.count === 0)).toBe(true);
    // The admin's session started when the workspace was created; the member signed in.
    expect(body.activeUsers).toEqual({ last7Days: 2, last30Days: 2 });
    expect(body.mfaAdoption).toEqual({ users: 2, totp: 0, passkey: 0, anyFactor: 0 });
  });

  it('counts the users with a factor', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const enroll = await suite.api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    const verify = await suite.api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
      email: member.email, password: PASSWORD, code: await new Authenticator(enroll.body.secret).nextCode(),
    });
    expect(verify.status).toBe(200);
    expect((await activity(tenant)).mfaAdoption).toEqual({ users: 2, totp: 1, passkey: 0, anyFactor: 1 });
  });

  it('keeps the counts of a day once it is closed and reads them back unchanged', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    expect((await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD })).status).toBe(200);
    expect((await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'not the password at all' })).status).toBe(401);
    const service = suite.server.services.activity;
    const em = () => suite.server.services.orm.em.fork();
    const live = await service.summary(em(), tenant.id);
    const day = live.to;
    // The closed days of the window are kept (zeros included); today is open and counted live.
    expect(await em().count(AuditDailyCountSchema, { tenantId: tenant.id })).toBe(29 * 3);
    expect(await em().count(AuditDailyCountSchema, { tenantId: tenant.id, day })).toBe(0);

    // Two days on, that day is closed: its counts are kept once (a row per counted action) and read back.
    const later = new Date(Date.now() + 2 * 86_400_000);
    const closed = await service.summary(em(), tenant.id, later);
    const on = (series: { date: string; count: number }[]) => series.find((d) => d.date === day)?.count;
    expect(on(closed.signIns)).toBe(live.signIns.at(-1)!.count);
    expect(on(closed.failedSignIns)).toBe(1);
    expect(on(closed.signUps)).toBe(2);
    const kept = await em().find(AuditDailyCountSchema, { tenantId: tenant.id, day }, { orderBy: { action: 'asc' } });
    expect(kept.map((k) => [k.action, k.count])).toContainEqual(['UserLoginFailed', 1]);
    expect(new Set(kept.map((k) => k.action))).toEqual(new Set(['UserLogin', 'UserLoginFailed', 'UserSignup']));
    const rowsKept = await em().count(AuditDailyCountSchema, { tenantId: tenant.id });
    expect(await service.summary(em(), tenant.id, later)).toEqual(closed);
    expect(await em().count(AuditDailyCountSchema, { tenantId: tenant.id })).toBe(rowsKept);
  });

  it('is for admins only', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    expectError(await suite.api.get(`/v1/${tenant.slug}/audit/activity`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expect((await suite.api.get(`/v1/${tenant.slug}/audit/activity`)).status).toBe(401);
  });
});
