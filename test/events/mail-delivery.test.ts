import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterEach, describe, expect, it } from 'vitest';
import { Api, createTenant, signupMember } from '../helpers/api.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { setMfaPolicy } from '../helpers/tenant-settings.js';
import { closedPort, eventually } from '../helpers/polling.js';
import { mailMessageId } from '../../src/services/mail/mail-transport.js';

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

async function requiredTenantMember(api: Api) {
  const tenant = await createTenant(api);
  await setMfaPolicy(server!, tenant.slug, 'Required');
  return { tenant, member: await signupMember(api, tenant.slug) };
}

const codeOf = (text: string) => /^ {4}(\d{6})$/m.exec(text)?.[1];

describe('mail delivery', () => {
  it('gives a mail the Message-ID of its job, on the domain of MAIL_FROM', () => {
    const jobId = '0b7c1f0e-8a4e-4c7a-9a51-4f2d1c7e9b10';
    expect(mailMessageId(jobId, 'no-reply@example.com')).toBe(`<${jobId}@example.com>`);
    expect(mailMessageId(jobId, 'Acme Identity <no-reply@id.acme.test>')).toBe(`<${jobId}@id.acme.test>`);
    expect(mailMessageId(jobId, 'no-reply')).toBe(`<${jobId}@localhost>`);
  });

  it('writes an .eml file with text and HTML bodies to DATA_DIR/outbox when SMTP_URL is unset, and logs it', async () => {
    server = await startTestServer({ SMTP_URL: undefined });
    const api = new Api(server.url);
    const { tenant, member } = await requiredTenantMember(api);

    const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
    expect(res.status, JSON.stringify(res.body)).toBe(200);

    const outbox = path.join(server.services.config.dataDir, 'outbox');
    // the outbox also holds the verification mail the workspace's creator got at creation
    const files = await eventually(() => {
      const found = existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml') && readFileSync(path.join(outbox, f), 'utf8').includes(member.email)) : [];
      return found.length > 0 ? found : undefined;
    }, 'the outbox file');
    expect(files).toHaveLength(1);
    const mail = await simpleParser(readFileSync(path.join(outbox, files[0]!)));
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : '').toBe(member.email);
    const code = codeOf(mail.text ?? '');
    expect(code).toMatch(/^\d{6}$/);
    expect(typeof mail.html === 'string' && mail.html.includes(code!)).toBe(true);
    await eventually(() => (server!.logs.some((line) => line.includes('mail written to the dev outbox') && line.includes(files[0]!)) ? true : undefined), 'the log line');
    expect(server.logs.some((line) => line.includes(code!))).toBe(false);

    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'correct horse battery staple', emailOtpCode: code });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
  });

  it('answers at once while the SMTP server is down, keeps the mail encrypted in the queue, and delivers it once the server is up, as the same message', async () => {
    const port = await closedPort();
    server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${port}` });
    const api = new Api(server.url);
    const { tenant, member } = await requiredTenantMember(api);

    const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // the worker tries, fails, and schedules a retry; the failure is logged without the body
    await eventually(() => (server!.logs.some((line) => line.includes('mail delivery failed') && line.includes('"level":50')) ? true : undefined), 'a failed attempt');
    await eventually(() => (server!.logs.some((line) => line.includes('job failed, will retry') && line.includes('mail.send')) ? true : undefined), 'a scheduled retry');
    // this instance's queue only: test files running beside this one share the database, not the queue
    const queue = server.services.config.jobQueue;
    const queued = await server.services.orm.em.fork().execute<{ id: string; payload: unknown }[]>(`select id, payload from job where kind = 'mail.send' and queue = ?`, [queue]);
    expect(queued).toHaveLength(1);
    expect(JSON.stringify(queued[0]!.payload)).not.toContain(member.email);
    // the mail queued so far is the workspace creator's verification mail (the sign-in code is queued by a job of its own)
    const jobId = queued[0]!.id;
    expect(server.logs.some((line) => line.includes('mail delivery failed') && line.includes(jobId))).toBe(true);

    const sink = await startSmtpSink(port);
    try {
      const mail = await sink.waitFor(member.email, undefined, 30_000);
      // a mail's Message-ID is its job's, the same on every run of the job, and the log line of the sending names the job
      expect(mail.messageId).toMatch(/^<[0-9a-f-]{36}@localhost>$/);
      await eventually(() => (sink.messages.some((m) => m.messageId === `<${jobId}@localhost>`) ? true : undefined), 'the retried mail');
      expect(sink.messages.filter((m) => m.messageId === `<${jobId}@localhost>`)).toHaveLength(1);
      await eventually(() => (server!.logs.some((line) => line.includes('"mail sent"') && line.includes(jobId)) ? true : undefined), 'the log line of the sending');
      const code = codeOf(mail.text);
      expect(code).toMatch(/^\d{6}$/);
      expect(server.logs.some((line) => line.includes(code!))).toBe(false);
      const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'correct horse battery staple', emailOtpCode: code });
      expect(login.status, JSON.stringify(login.body)).toBe(200);
      await eventually(async () => {
        const left = await server!.services.orm.em.fork().execute(`select 1 from job where kind = 'mail.send' and queue = ?`, [queue]);
        return left.length === 0 ? true : undefined;
      }, 'the delivered job to be removed');
      expect(sink.messages.filter((m) => m.to.includes(member.email.toLowerCase()))).toHaveLength(1);
    } finally {
      await sink.close();
    }
  });

  it('answers at once instead of hanging when the SMTP server never greets', async () => {
    const silent = await silentServer();
    try {
      server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${silent.port}` });
      const api = new Api(server.url);
      const { tenant, member } = await requiredTenantMember(api);
      const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    } finally {
      await server?.close(100);
      server = undefined;
      await silent.close();
    }
  });
});
