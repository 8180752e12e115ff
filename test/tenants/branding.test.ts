import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, signupMember, unique } from '../helpers/api.js';
import { issueApiKey } from '../helpers/principals.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
/** A 1×1 GIF. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

const PUBLIC_URL = 'https://id.example.test';

let server: TestServer;
let guarded: TestServer;
let sink: SmtpSink;
let api: Api;
let imageHost: Server;
let imageBase: string;
const openAnswers = new Set<ServerResponse>();

beforeAll(async () => {
  sink = await startSmtpSink();
  // this instance may fetch logos from 127.0.0.1 (the issuers' allowance, as in tests of providers)
  server = await startTestServer({ SMTP_URL: sink.url, PUBLIC_URL, IDP_ALLOW_PRIVATE_ISSUERS: 'true' });
  guarded = await startTestServer({ PUBLIC_URL });
  api = new Api(server.url);
  imageHost = createServer((req, res) => {
    if (req.url === '/logo.gif') res.writeHead(200, { 'content-type': 'image/gif' }).end(GIF);
    else if (req.url === '/endless.png') {
      // more than the limit, then the answer stays open: only a fetch that stops at the limit gets past it
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(PNG);
      for (let i = 0; i < 5; i++) res.write(Buffer.alloc(64 * 1024));
      openAnswers.add(res);
      res.on('close', () => openAnswers.delete(res));
    } else if (req.url === '/announced.png') res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(10 * 1024 * 1024) }).write(PNG);
    else if (req.url === '/fake.png') res.writeHead(200, { 'content-type': 'image/png' }).end(SVG);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => imageHost.listen(0, '127.0.0.1', resolve));
  imageBase = `http://127.0.0.1:${(imageHost.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server?.close();
  await guarded?.close();
  await sink?.close();
  for (const res of openAnswers) res.destroy();
  await new Promise((resolve) => imageHost?.close(resolve));
});

const sql = <T>(query: string, params: unknown[]) => (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;

describe('workspace branding', () => {
  it('sets the display name, colour and support link, shows them to the sign-in page, audits the change, and clears them with null', async () => {
    const tenant = await createTenant(api, `Acme ${unique()}`);
    const res = await api.patch(
      `/v1/${tenant.slug}/tenant`,
      { displayName: 'Acme Cloud', primaryColor: '#0F766E', supportUrl: 'https://help.acme.example/' },
      { token: tenant.accessToken },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ displayName: 'Acme Cloud', primaryColor: '#0f766e', supportUrl: 'https://help.acme.example/', logoUrl: null });
    expect((await api.get(`/v1/${tenant.slug}/sign-in-options`)).body.branding).toEqual({
      displayName: 'Acme Cloud', logoUrl: null, darkLogoUrl: null, brandDisplay: 'LogoAndName', primaryColor: '#0f766e', supportUrl: 'https://help.acme.example/',
    });
    const [event] = await sql<{ details: { changes: Record<string, unknown> } }>(
      `select details from audit_event where tenant_id = ? and action = 'TenantUpdated' order by created_at desc limit 1`, [tenant.id]);
    expect(event!.details.changes).toEqual({
      displayName: { from: null, to: 'Acme Cloud' },
      primaryColor: { from: null, to: '#0f766e' },
      supportUrl: { from: null, to: 'https://help.acme.example/' },
    });

    const cleared = await api.patch(`/v1/${tenant.slug}/tenant`, { displayName: null, primaryColor: null, supportUrl: null }, { token: tenant.accessToken });
    expect(cleared.body).toMatchObject({ displayName: null, primaryColor: null, supportUrl: null });
    // without a display name the pages and mails show the workspace's name
    expect((await api.get(`/v1/${tenant.slug}/sign-in-options`)).body.branding.displayName).toBe(cleared.body.name);
  });

  it('refuses a colour white text cannot be read on, a help link that is not https or mailto, a member and another workspace\'s admin', async () => {
    const tenant = await createTenant(api);
    const low = await api.patch(`/v1/${tenant.slug}/tenant`, { primaryColor: '#ffcc00' }, { token: tenant.accessToken });
    expectError(low, 400, 'BAD_REQUEST', 'color_contrast_too_low');
    expect(low.body.message).toContain('1.51:1');
    expectError(await api.patch(`/v1/${tenant.slug}/tenant`, { supportUrl: 'javascript:alert(1)' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    expectError(await api.patch(`/v1/${tenant.slug}/tenant`, { supportUrl: 'http://help.example/' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    expect((await api.patch(`/v1/${tenant.slug}/tenant`, { supportUrl: 'mailto:help@acme.example' }, { token: tenant.accessToken })).status).toBe(200);

    const member = await signupMember(api, tenant.slug);
    expectError(await api.patch(`/v1/${tenant.slug}/tenant`, { displayName: 'Mine' }, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expectError(await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: PNG.toString('base64') }, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    const other = await createTenant(api);
    const cross = await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: PNG.toString('base64') }, { token: other.accessToken });
    expect([401, 403]).toContain(cross.status);
    expect((await api.get(`/v1/${tenant.slug}/branding/logo`)).status).toBe(404);
    const testKey = await issueApiKey(api, server, tenant);
    expectError(await api.delete(`/v1/${tenant.slug}/tenant/logo`, { token: testKey.plaintext }), 403, 'FORBIDDEN', 'live_key_required');
  });

  it('stores an uploaded PNG, serves it with its type, ETag, cache and nosniff headers, answers 304, and removes it', async () => {
    const tenant = await createTenant(api);
    const res = await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: PNG.toString('base64') }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.logoUrl).toMatch(new RegExp(`^/v1/${tenant.slug}/branding/logo\\?v=[0-9a-f]{16}$`));

    const logo = await fetch(`${server.url}${res.body.logoUrl}`);
    expect(logo.status).toBe(200);
    expect(logo.headers.get('content-type')).toBe('image/png');
    expect(logo.headers.get('x-content-type-options')).toBe('nosniff');
    expect(logo.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = logo.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(Buffer.from(await logo.arrayBuffer()).equals(PNG)).toBe(true);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await api.get(`/v1/${tenant.slug}/sign-in-options`)).body.branding.logoUrl).toBe(res.body.logoUrl);

    const removed = await api.delete(`/v1/${tenant.slug}/tenant/logo`, { token: tenant.accessToken });
    expect(removed.body.logoUrl).toBeNull();
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`)).status).toBe(404);
  });

  it('judges the type from the bytes: refuses SVG, text labelled as an image, and a logo over 256 KiB; takes one of 256 KiB', async () => {
    const tenant = await createTenant(api);
    const put = (bytes: Buffer) => api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: bytes.toString('base64') }, { token: tenant.accessToken });
    expectError(await put(SVG), 400, 'BAD_REQUEST', 'logo_type_not_allowed');
    expectError(await put(Buffer.from('hello, this is not an image')), 400, 'BAD_REQUEST', 'logo_type_not_allowed');
    expectError(await put(Buffer.concat([PNG, Buffer.alloc(262_144 - PNG.length + 1)])), 400, 'BAD_REQUEST', 'logo_too_large');
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`)).status).toBe(404);
    const largest = Buffer.concat([PNG, Buffer.alloc(262_144 - PNG.length)]);
    const res = await put(largest);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Buffer.from(await (await fetch(`${server.url}${res.body.logoUrl}`)).arrayBuffer()).equals(largest)).toBe(true);
  });

  it('gives only the logo routes the larger body limit, on REST and /trpc, and says so in the OpenAPI document', async () => {
    const tenant = await createTenant(api);
    // a body between the common limit (100 KiB) and the logo routes' (352 KiB)
    const big = Buffer.concat([PNG, Buffer.alloc(200 * 1024)]).toString('base64');
    expect((await api.put(`/v1/${tenant.slug}/tenant/logo/dark`, { dataBase64: big }, { token: tenant.accessToken })).status).toBe(200);
    const trpc = await fetch(`${server.url}/trpc/tenant.setLogo`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.accessToken}` },
      body: JSON.stringify({ tenantSlug: tenant.slug, dataBase64: big }),
    });
    expect(trpc.status).toBe(200);
    expectError(await api.patch(`/v1/${tenant.slug}/tenant`, { displayName: 'x'.repeat(200 * 1024) }, { token: tenant.accessToken }), 413, 'PAYLOAD_TOO_LARGE', 'body_too_large');
    const tooBig = Buffer.alloc(400 * 1024).toString('base64');
    const refused = await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: tooBig }, { token: tenant.accessToken });
    expectError(refused, 413, 'PAYLOAD_TOO_LARGE', 'body_too_large');

    const doc = (await api.get('/v1/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> };
    expect(doc.paths['/v1/{tenantSlug}/tenant/logo']!.put!.responses['413']!.description).toContain('larger than 360448 bytes');
    expect(doc.paths['/v1/{tenantSlug}/tenant/logo/dark']!.put!.responses['413']!.description).toContain('larger than 360448 bytes');
    expect(doc.paths['/v1/{tenantSlug}/tenant']!.patch!.responses['413']!.description).toContain('larger than 102400 bytes');
    expect(doc.paths['/v1/{tenantSlug}/branding/logo/dark']!.get!.responses['304']).toBeDefined();
  });

  it('keeps a served logo in memory: a change made elsewhere shows after the TTL or at once for a link to the new version; 304 for its ETag or *', async () => {
    const tenant = await createTenant(api);
    const set = await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: PNG.toString('base64') }, { token: tenant.accessToken });
    const first = await fetch(`${server.url}${set.body.logoUrl}`);
    expect(first.headers.get('content-type')).toBe('image/png');
    // another instance stores a new logo: this one still serves the remembered bytes to a link without the new version...
    const etag = 'ab'.repeat(32);
    await sql(`update tenant_logo set bytes = ?, content_type = 'image/gif', etag = ? where tenant_id = ?`, [GIF, etag, tenant.id]);
    const cached = await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`);
    expect(cached.headers.get('content-type')).toBe('image/png');
    expect(await fetch(`${server.url}${set.body.logoUrl}`).then((r) => r.headers.get('content-type'))).toBe('image/png');
    // ...and reads it again for a link naming the new version (at most once a second)
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const fresh = await fetch(`${server.url}/v1/${tenant.slug}/branding/logo?v=${etag.slice(0, 16)}`);
    expect(fresh.headers.get('content-type')).toBe('image/gif');
    expect(fresh.headers.get('etag')).toBe(`"${etag}"`);
    expect(fresh.headers.get('cache-control')).toBe('public, max-age=300');
    // the old link now gets the new bytes, which caches must not keep under the old version's URL
    const old = await fetch(`${server.url}${set.body.logoUrl}`);
    expect(old.headers.get('content-type')).toBe('image/gif');
    expect(old.headers.get('cache-control')).toBe('no-cache');
    expect(Buffer.from(await fresh.arrayBuffer()).equals(GIF)).toBe(true);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`, { headers: { 'if-none-match': `W/"x", "${etag}"` } })).status).toBe(304);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`, { headers: { 'if-none-match': '*' } })).status).toBe(304);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    // a change on this instance shows at once
    const removed = await api.delete(`/v1/${tenant.slug}/tenant/logo`, { token: tenant.accessToken });
    expect(removed.status).toBe(200);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo`)).status).toBe(404);
  });

  it('sets a logo for the dark theme: served at branding/logo/dark (the logo there without one), in sign-in-options, audited, removable', async () => {
    const tenant = await createTenant(api);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo/dark`)).status).toBe(404);
    const light = await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: PNG.toString('base64') }, { token: tenant.accessToken });
    expect(light.body.darkLogoUrl).toBeNull();
    // without a dark logo the dark route serves the logo
    const fallback = await fetch(`${server.url}/v1/${tenant.slug}/branding/logo/dark`);
    expect(fallback.headers.get('content-type')).toBe('image/png');

    const dark = await api.put(`/v1/${tenant.slug}/tenant/logo/dark`, { dataBase64: GIF.toString('base64') }, { token: tenant.accessToken });
    expect(dark.status, JSON.stringify(dark.body)).toBe(200);
    expect(dark.body.darkLogoUrl).toMatch(new RegExp(`^/v1/${tenant.slug}/branding/logo/dark\\?v=[0-9a-f]{16}$`));
    expect(dark.body.logoUrl).toBe(light.body.logoUrl);
    const served = await fetch(`${server.url}${dark.body.darkLogoUrl}`);
    expect(served.headers.get('content-type')).toBe('image/gif');
    expect(served.headers.get('cache-control')).toBe('public, max-age=300');
    expect(Buffer.from(await served.arrayBuffer()).equals(GIF)).toBe(true);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo/dark`, { headers: { 'if-none-match': served.headers.get('etag')! } })).status).toBe(304);
    expect((await fetch(`${server.url}${light.body.logoUrl}`)).headers.get('content-type')).toBe('image/png');
    expect((await api.get(`/v1/${tenant.slug}/sign-in-options`)).body.branding).toMatchObject({ logoUrl: light.body.logoUrl, darkLogoUrl: dark.body.darkLogoUrl });
    const [event] = await sql<{ details: { changes: Record<string, { from: unknown; to: string }> } }>(
      `select details from audit_event where tenant_id = ? and action = 'TenantUpdated' order by created_at desc limit 1`, [tenant.id]);
    expect(event!.details.changes).toEqual({ darkLogo: { from: null, to: expect.stringMatching(/^[0-9a-f]{64}$/) } });

    // the URL form and its checks work for the dark logo too
    expectError(await api.put(`/v1/${tenant.slug}/tenant/logo/dark`, { dataBase64: SVG.toString('base64') }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'logo_type_not_allowed');
    const member = await signupMember(api, tenant.slug);
    expectError(await api.put(`/v1/${tenant.slug}/tenant/logo/dark`, { dataBase64: PNG.toString('base64') }, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expectError(await api.delete(`/v1/${tenant.slug}/tenant/logo/dark`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');

    const removed = await api.delete(`/v1/${tenant.slug}/tenant/logo/dark`, { token: tenant.accessToken });
    expect(removed.body).toMatchObject({ darkLogoUrl: null, logoUrl: light.body.logoUrl });
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo/dark`)).headers.get('content-type')).toBe('image/png');
    await api.delete(`/v1/${tenant.slug}/tenant/logo`, { token: tenant.accessToken });
    expect((await fetch(`${server.url}/v1/${tenant.slug}/branding/logo/dark`)).status).toBe(404);
  });

  it('sets how the header shows the workspace (logo and name, logo only, name only), audited, given to the pages and followed by mails', async () => {
    const tenant = await createTenant(api);
    expectError(await api.patch(`/v1/${tenant.slug}/tenant`, { brandDisplay: 'Both' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    const res = await api.patch(`/v1/${tenant.slug}/tenant`, { brandDisplay: 'LogoOnly', displayName: 'Globex' }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.brandDisplay).toBe('LogoOnly');
    expect((await api.get(`/v1/${tenant.slug}/sign-in-options`)).body.branding).toMatchObject({ brandDisplay: 'LogoOnly', displayName: 'Globex' });
    const [event] = await sql<{ details: { changes: Record<string, unknown> } }>(
      `select details from audit_event where tenant_id = ? and action = 'TenantUpdated' order by created_at desc limit 1`, [tenant.id]);
    expect(event!.details.changes).toMatchObject({ brandDisplay: { from: 'LogoAndName', to: 'LogoOnly' } });

    // a mail shows the logo alone, the name as its alt text
    await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: PNG.toString('base64') }, { token: tenant.accessToken });
    const member = await signupMember(api, tenant.slug);
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email });
    const mail = await sink.waitFor(member.email, (m) => m.subject.startsWith('Reset your password'));
    expect(mail.html).toMatch(/<img src="[^"]+branding\/logo\?v=[0-9a-f]{16}" alt="&quot;Globex&quot;"/);
    expect(mail.html).not.toContain('font-size:18px;font-weight:600');
  });

  it('fetches a logo URL once and stores it like an upload; a fake image and a private address are refused', async () => {
    const tenant = await createTenant(api);
    const res = await api.put(`/v1/${tenant.slug}/tenant/logo`, { url: `${imageBase}/logo.gif` }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const logo = await fetch(`${server.url}${res.body.logoUrl}`);
    expect(logo.headers.get('content-type')).toBe('image/gif');
    expectError(await api.put(`/v1/${tenant.slug}/tenant/logo`, { url: `${imageBase}/fake.png` }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'logo_type_not_allowed');
    expectError(await api.put(`/v1/${tenant.slug}/tenant/logo`, { url: `${imageBase}/missing.png` }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'logo_unreachable');
    // an answer over 256 KiB is cut at the limit (not read to its end, which never comes), or refused on its Content-Length
    const started = Date.now();
    expectError(await api.put(`/v1/${tenant.slug}/tenant/logo/dark`, { url: `${imageBase}/endless.png` }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'logo_too_large');
    expect(Date.now() - started).toBeLessThan(4_000);
    expectError(await api.put(`/v1/${tenant.slug}/tenant/logo`, { url: `${imageBase}/announced.png` }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'logo_too_large');

    // an instance without the allowance refuses loopback, private and link-local targets before any request
    const guardedApi = new Api(guarded.url);
    const other = await createTenant(guardedApi);
    for (const url of [`${imageBase}/logo.gif`, 'https://127.0.0.1/logo.png', 'https://169.254.169.254/latest/meta-data', 'https://10.0.0.1/x.png']) {
      expectError(await guardedApi.put(`/v1/${other.slug}/tenant/logo`, { url }, { token: other.accessToken }), 400, 'BAD_REQUEST', 'logo_unreachable');
    }
  });

  it('brands the mails: the display name, the logo at PUBLIC_URL, the colour of the button and the support link', async () => {
    const tenant = await createTenant(api);
    await api.put(`/v1/${tenant.slug}/tenant/logo`, { dataBase64: PNG.toString('base64') }, { token: tenant.accessToken });
    await api.patch(`/v1/${tenant.slug}/tenant`, { displayName: 'Acme Cloud', primaryColor: '#0f766e', supportUrl: 'https://help.acme.example/' }, { token: tenant.accessToken });
    const member = await signupMember(api, tenant.slug);
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email });
    const mail = await sink.waitFor(member.email, (m) => m.subject.startsWith('Reset your password'));
    expect(mail.subject).toBe('Reset your password for "Acme Cloud"');
    expect(mail.html).toMatch(new RegExp(`<img src="${PUBLIC_URL}/v1/${tenant.slug}/branding/logo\\?v=[0-9a-f]{16}"`));
    expect(mail.html).toContain('background:#0f766e');
    expect(mail.html).toContain('href="https://help.acme.example/"');
  });
});
