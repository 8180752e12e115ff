import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { AuditExportService, AUDIT_CSV_COLUMNS } from '../../src/services/audit/audit-export-service.js';
import { createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();

async function exportAudit(tenant: TestTenant, query: string, token = tenant.accessToken) {
  const res = await fetch(`${suite.server.url}/v1/${tenant.slug}/audit/export${query}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function auditList(tenant: TestTenant, query = '') {
  const res = await suite.api.get(`/v1/${tenant.slug}/audit${query}`, { token: tenant.accessToken });
  expect(res.status).toBe(200);
  return res.body.items as Record<string, any>[];
}

describe('GET /v1/{tenantSlug}/audit/export', () => {
  it('streams the filtered view as CSV an admin can read back, with emails, newest first, and only the own tenant', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const formula = '=HYPERLINK("https://attacker.example","open")';
    await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'wrong password here' }, { headers: { 'user-agent': formula } });

    const res = await exportAudit(tenant, '');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="audit-${tenant.slug}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`));
    const records = parse(res.text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([...AUDIT_CSV_COLUMNS]);
    const listed = await auditList(tenant, '?limit=200');
    expect(records.map((r) => r.action)).toEqual(listed.map((i) => i.action));
    expect(records.map((r) => r.createdAt)).toEqual(listed.map((i) => i.createdAt));
    expect(records.some((r) => r.actorId === other.adminId || r.targetId === other.adminId)).toBe(false);
    // The acting admin's email is filled in; a value a spreadsheet would run as a formula is made inert.
    expect(records.find((r) => r.action === 'TenantCreated')!.actorEmail).toBe(tenant.adminEmail);
    const failed = records.find((r) => r.action === 'UserLoginFailed')!;
    expect(failed.targetEmail).toBe(member.email);
    expect(failed.userAgent).toBe(`'${formula}`);
    expect(JSON.parse(records.find((r) => r.action === 'UserSignup' && r.targetId === member.id)!.details!)).toEqual(expect.any(Object));
  });

  it('applies the filters of GET audit, including a date range, and answers JSON as the document describes', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const all = await auditList(tenant, '?limit=200');
    const memberEvents = await auditList(tenant, `?userId=${member.id}`);

    const json = await suite.api.get(`/v1/${tenant.slug}/audit/export?format=json&userId=${member.id}`, { token: tenant.accessToken });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-disposition')).toMatch(/\.json"$/);
    expect((json.body as any[]).map((e) => e.id)).toEqual(memberEvents.map((e) => e.id));
    expect((json.body as any[])[0]).toMatchObject({ actorEmail: expect.any(String) });

    const signups = await suite.api.get(`/v1/${tenant.slug}/audit/export?format=json&action=UserSignup`, { token: tenant.accessToken });
    expect((signups.body as any[]).map((e) => e.targetId).sort()).toEqual([tenant.adminId, member.id].sort());

    const oldest = all[all.length - 1]!.createdAt as string;
    const since = await suite.api.get(`/v1/${tenant.slug}/audit/export?format=json&since=${encodeURIComponent(new Date(Date.parse(oldest) + 1).toISOString())}`, {
      token: tenant.accessToken,
    });
    expect((since.body as any[]).every((e) => Date.parse(e.createdAt) > Date.parse(oldest))).toBe(true);
    expect((since.body as any[]).length).toBe(all.filter((e) => Date.parse(e.createdAt) > Date.parse(oldest)).length);
    const before = await suite.api.get(`/v1/${tenant.slug}/audit/export?format=json&before=${encodeURIComponent(oldest)}`, { token: tenant.accessToken });
    expect(before.body).toEqual([]);
    const searched = await suite.api.get(`/v1/${tenant.slug}/audit/export?format=json&search=${encodeURIComponent(member.email.toUpperCase())}`, {
      token: tenant.accessToken,
    });
    expect((searched.body as any[]).length).toBeGreaterThan(0);
    expect((searched.body as any[]).every((e) => e.actorId === member.id || e.targetId === member.id)).toBe(true);

    const empty = await exportAudit(tenant, `?action=ApiKeyCreated`);
    expect(empty.text.trim()).toBe(AUDIT_CSV_COLUMNS.join(','));
  });

  it('is refused to members, other tenants\' admins and invalid filters', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    expectError(await suite.api.get(`/v1/${tenant.slug}/audit/export`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expect((await suite.api.get(`/v1/${tenant.slug}/audit/export`, { token: other.accessToken })).status).toBe(401);
    expect((await suite.api.get(`/v1/${tenant.slug}/audit/export`)).status).toBe(401);
    expectError(await suite.api.get(`/v1/${tenant.slug}/audit/export?format=xml`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await suite.api.get(`/v1/${tenant.slug}/audit/export?since=yesterday`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await suite.api.get(`/v1/${tenant.slug}/audit/export?search=`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    // The typed /trpc endpoint answers JSON only: the export is a REST download.
    const viaTrpc = await fetch(`${suite.server.url}/trpc/audit.export?input=${encodeURIComponent(JSON.stringify({ tenantSlug: tenant.slug }))}`, {
      headers: { authorization: `Bearer ${tenant.accessToken}` },
    });
    expect(viaTrpc.status).toBe(404);
  });

  it('reads in batches by keyset without losing or repeating an event at a batch boundary', async () => {
    const tenant = await createTenant(suite.api);
    for (let i = 0; i < 3; i++) await signupMember(suite.api, tenant.slug);
    await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: tenant.adminEmail, password: PASSWORD });
    const listed = await auditList(tenant, '?limit=200');
    const chunks: string[] = [];
    const count = await new AuditExportService(2).export(suite.server.services.orm.em.fork(), tenant.id, {}, 'json', {
      write: async (chunk) => void chunks.push(chunk),
    });
    const exported = JSON.parse(chunks.join('')) as { id: string }[];
    expect(count).toBe(listed.length);
    expect(exported.map((e) => e.id)).toEqual(listed.map((e) => e.id));
    expect(chunks.length).toBeGreaterThan(listed.length / 2);
  });
});
