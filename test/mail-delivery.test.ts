import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterEach, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, signupMember } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { setMfaPolicy } from './helpers/tenant-settings.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A TCP server on loopback that accepts connections and never says anything (a hung SMTP server). */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  const { port } = silent.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy());
        silent.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function requiredTenantMember(api: Api) {
  const tenant = await createTenant(api);
  await setMfaPolicy(server!, tenant.slug, 'Required');
  return { tenant, member: await signupMember(api, tenant.slug) };
}

describe('mail delivery', () => {
  it('writes an .eml file with text and HTML bodies to DATA_DIR/outbox when SMTP_URL is unset, and logs it', async () => {
    server = await startTestServer({ SMTP_URL: undefined });
    const api = new Api(server.url);
    const { tenant, member } = await requiredTenantMember(api);

    const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
    expect(res.status, JSON.stringify(res.body)).toBe(200);

    const outbox = path.join(server.services.config.dataDir, 'outbox');
    const files = readdirSync(outbox).filter((f) => f.endsWith('.eml'));
    expect(files).toHaveLength(1);
    const mail = await simpleParser(readFileSync(path.join(outbox, files[0]!)));
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : '').toBe(member.email);
    const code = /\b(\d{6})\b/.exec(mail.text ?? '')?.[1];
    expect(code).toMatch(/^\d{6}$/);
    expect(typeof mail.html === 'string' && mail.html.includes(code!)).toBe(true);
    expect(server.logs.some((line) => line.includes('mail written to the dev outbox') && line.includes(files[0]!))).toBe(true);
    expect(server.logs.some((line) => line.includes(code!))).toBe(false);

    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'correct horse battery staple', emailOtpCode: code });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
  });

  it('answers 503 mail_delivery_failed, logs the failure and keeps no code when the SMTP server is unreachable', async () => {
    server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` });
    const api = new Api(server.url);
    const { tenant, member } = await requiredTenantMember(api);

    const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
    expectError(res, 503, 'SERVICE_UNAVAILABLE', 'mail_delivery_failed');
    expect(res.body.message).toBe('The email could not be sent; try again later');
    expect(JSON.stringify(res.body)).not.toContain('ECONNREFUSED');
    expect(server.logs.some((line) => line.includes('mail delivery failed') && line.includes('"level":50'))).toBe(true);

    const rows = await server.services.orm.em.fork().execute('select 1 from email_otp where user_id = ?', [member.id]);
    expect(rows).toHaveLength(0);
    const sent = await server.services.orm.em
      .fork()
      .execute(`select 1 from audit_event where tenant_id = ? and action = 'MfaEmailOtpSent'`, [tenant.id]);
    expect(sent).toHaveLength(0);
  });

  it('answers 503 instead of hanging when the SMTP server never greets', async () => {
    const silent = await silentServer();
    try {
      server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${silent.port}` });
      const api = new Api(server.url);
      const { tenant, member } = await requiredTenantMember(api);
      const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
      expectError(res, 503, 'SERVICE_UNAVAILABLE', 'mail_delivery_failed');
    } finally {
      await silent.close();
    }
  });
});
