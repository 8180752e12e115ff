import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED_PATHS } from '../../src/logger.js';
import { appRouter } from '../../src/routers/index.js';
import { sha256Hex } from '../../src/security/tokens.js';
import { Api, type ApiResponse, unique } from '../helpers/api.js';
import { issueApiKey } from '../helpers/principals.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

/**
 * Secret hygiene (OWASP ASVS V11 cryptography at rest, V14 data protection, V16 logging): a full run
 * through every credential-issuing route present, then the logs, every response and the raw database
 * rows are searched for every secret the run created.
 */

/** An Api that keeps the text of every response, in order. */
class RecordingApi extends Api {
  readonly responses: string[] = [];
  override async request<T = Record<string, any>>(...args: Parameters<Api['request']>): Promise<ApiResponse<T>> {
    const res = await super.request<T>(...args);
    this.responses.push(JSON.stringify(res.body));
    return res;
  }
}

interface Secret {
  label: string;
  value: string;
  /** Index of the one response allowed to carry it (the one that issued it), if any. */
  issuedIn?: number;
}

const has = (procedure: string) => procedure in appRouter._def.procedures;

let sink: SmtpSink;
let server: TestServer;
let api: RecordingApi;
const secrets: Secret[] = [];
let tenantId = '';
let firstRefreshToken = '';

/** Registers a secret issued by the last response (or by none, for values the client chose). */
function keep(label: string, value: unknown, issued: boolean): void {
  expect(typeof value, label).toBe('string');
  secrets.push({ label, value: value as string, issuedIn: issued ? api.responses.length - 1 : undefined });
}

/** Matches a secret as a whole token (a 6-digit code must not match inside a longer number). */
function occursIn(text: string, secret: string): boolean {
  if (/^\d+$/.test(secret)) return new RegExp(`(?<!\\d)${secret}(?!\\d)`).test(text);
  return text.includes(secret);
}

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ SMTP_URL: sink.url, LOG_LEVEL: 'trace' });
  api = new RecordingApi(server.url);

  const adminPassword = `admin pw ${unique()} ${unique()}`;
  const adminEmail = `owner-${unique()}@example.com`;
  keep('admin password', adminPassword, false);
  const created = await api.post('/v1/tenants', { tenant: { name: `Secrets ${unique()}` }, admin: { email: adminEmail, password: adminPassword } });
  expect(created.status).toBe(200);
  keep('tenant access token', created.body.accessToken, true);
  keep('tenant refresh token', created.body.refreshToken, true);
  const slug = created.body.tenantSlug as string;
  tenantId = created.body.tenant.id;
  firstRefreshToken = created.body.refreshToken;
  const admin = { token: created.body.accessToken as string };

  const memberPassword = `member pw ${unique()} ${unique()}`;
  const memberEmail = `member-${unique()}@example.com`;
  keep('member password', memberPassword, false);
  const signup = await api.post(`/v1/${slug}/auth/signup`, { email: memberEmail, password: memberPassword });
  keep('signup access token', signup.body.accessToken, true);
  keep('signup refresh token', signup.body.refreshToken, true);

  const wrongPassword = `wrong pw ${unique()} ${unique()}`;
  keep('wrong password', wrongPassword, false);
  expect((await api.post(`/v1/${slug}/auth/login`, { email: memberEmail, password: wrongPassword })).status).toBe(401);
  expect((await api.post(`/v1/${slug}/auth/login`, { email: `nobody-${unique()}@example.com`, password: wrongPassword })).status).toBe(401);

  const login = await api.post(`/v1/${slug}/auth/login`, { email: memberEmail, password: memberPassword });
  keep('login access token', login.body.accessToken, true);
  keep('login refresh token', login.body.refreshToken, true);
  const refreshed = await api.post(`/v1/${slug}/auth/refresh`, { refreshToken: login.body.refreshToken });
  keep('rotated access token', refreshed.body.accessToken, true);
  keep('rotated refresh token', refreshed.body.refreshToken, true);
  expect((await api.post(`/v1/${slug}/auth/refresh`, { refreshToken: login.body.refreshToken })).status).toBe(401);
  expect((await api.get(`/v1/${slug}/me`, { token: refreshed.body.accessToken })).status).toBe(401);

  const newPassword = `new member pw ${unique()} ${unique()}`;
  keep('changed password', newPassword, false);
  const changed = await api.patch(`/v1/${slug}/me/password`, { currentPassword: memberPassword, newPassword }, { token: signup.body.accessToken });
  expect(changed.status).toBe(200);
  const relogin = await api.post(`/v1/${slug}/auth/login`, { email: memberEmail, password: newPassword });
  keep('relogin access token', relogin.body.accessToken, true);
  keep('relogin refresh token', relogin.body.refreshToken, true);
  expect((await api.get(`/v1/${slug}/me`, { token: relogin.body.accessToken })).status).toBe(200);

  const key = await issueApiKey(api, server, { slug, id: tenantId, adminEmail, adminId: created.body.user.id, accessToken: admin.token, refreshToken: '' });
  keep('API key', key.plaintext, has('apiKeys.create'));
  await api.get(`/v1/${slug}/me`, { token: key.plaintext });
  if (has('tenant.get')) expect((await api.get(`/v1/${slug}/tenant`, { token: key.plaintext })).status).toBe(200);
  if (has('apiKeys.list')) await api.get(`/v1/${slug}/api-keys`, { token: key.plaintext });

  if (has('mfa.totpEnroll')) {
    const enroll = await api.post(`/v1/${slug}/mfa/totp/enroll`, undefined, admin);
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    keep('TOTP secret', enroll.body.secret, true);
    await api.get(`/v1/${slug}/me`, admin);
  }
  if (has('idp.putCredentials')) {
    const clientSecret = `idp-secret-${unique()}-${unique()}`;
    keep('IdP client secret', clientSecret, false);
    const put = await api.put(`/v1/${slug}/oauth/idp/credentials`, { clientId: `client-${unique()}`, clientSecret }, admin);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    if (has('tenant.get')) await api.get(`/v1/${slug}/tenant`, admin);
  }
  if (has('invites.create')) {
    const inviteEmail = `invitee-${unique()}@example.com`;
    const invite = await api.post(`/v1/${slug}/invites`, { email: inviteEmail }, admin);
    expect(invite.status, JSON.stringify(invite.body)).toBe(200);
    keep('invite token', invite.body.token, true);
    if (has('invites.list')) await api.get(`/v1/${slug}/invites`, admin);
    if (has('invites.accept')) {
      const invitePassword = `invitee pw ${unique()} ${unique()}`;
      keep('invitee password', invitePassword, false);
      const accepted = await api.post('/v1/invites/accept', { token: invite.body.token, password: invitePassword });
      keep('invitee access token', accepted.body.accessToken, true);
      keep('invitee refresh token', accepted.body.refreshToken, true);
    }
  }
  if (has('auth.requestEmailOtp') && has('tenant.update')) {
    // The email factor applies (and a code is mailed) only where the tenant requires MFA.
    expect((await api.patch(`/v1/${slug}/tenant`, { mfaPolicy: 'Required' }, admin)).status).toBe(200);
    const otp = await api.post(`/v1/${slug}/auth/request-email-otp`, { email: memberEmail, password: newPassword });
    expect(otp.status, JSON.stringify(otp.body)).toBe(200);
    const mail = await sink.waitFor(memberEmail);
    // the code stands on a line of its own; the tenant name above it may hold digits of its own
    const code = /^ {4}(\d{6})$/m.exec(mail.text)?.[1];
    keep('email one-time code', code, false);
    const withCode = await api.post(`/v1/${slug}/auth/login`, { email: memberEmail, password: newPassword, emailOtpCode: code });
    expect(withCode.status, JSON.stringify(withCode.body)).toBe(200);
    keep('email-code access token', withCode.body.accessToken, true);
    keep('email-code refresh token', withCode.body.refreshToken, true);
  }
  if (has('audit.list')) await api.get(`/v1/${slug}/audit?limit=200`, admin);
  await api.post(`/v1/${slug}/auth/logout`, { refreshToken: relogin.body.refreshToken });
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

describe('secret hygiene over a full run', () => {
  it('wrote logs and collected the secrets of the run (control)', () => {
    expect(server.logs.length).toBeGreaterThan(10);
    expect(server.logs.some((l) => l.includes('request refused') && l.includes('invalid_credentials'))).toBe(true);
    expect(secrets.length).toBeGreaterThanOrEqual(15);
  });

  it('never writes a secret to the logs', () => {
    const logs = server.logs.join('\n');
    const leaked = secrets.filter((s) => occursIn(logs, s.value)).map((s) => s.label);
    expect(leaked).toEqual([]);
  });

  it('returns a secret only in the response that issues it, never again', () => {
    const leaks: string[] = [];
    for (const secret of secrets) {
      api.responses.forEach((text, index) => {
        if (index !== secret.issuedIn && occursIn(text, secret.value)) leaks.push(`${secret.label} in response #${index}`);
      });
    }
    expect(leaks).toEqual([]);
  });

  it('keeps no plaintext secret in any database row of the tenant', async () => {
    {
      const em = server.services.orm.em.fork();
      const tables = (await em.execute(
        `select table_name from information_schema.columns where column_name = 'tenant_id' and table_schema = current_schema()`,
      )) as { table_name: string }[];
      const dump: string[] = [];
      for (const { table_name: table } of tables) {
        const rows = (await em.execute(`select t::text as row from "${table}" t where tenant_id = ?`, [tenantId])) as { row: string }[];
        dump.push(...rows.map((r) => `${table}: ${r.row}`));
      }
      dump.push(...((await em.execute('select t::text as row from tenant t where id = ?', [tenantId])) as { row: string }[]).map((r) => r.row));
      const text = dump.join('\n');
      // Control: the rows were read, and refresh tokens are there as their SHA-256 hash.
      expect(text).toContain(sha256Hex(firstRefreshToken));
      const stored = secrets.filter((s) => occursIn(text, s.value)).map((s) => s.label);
      expect(stored).toEqual([]);
    }
  });
});

describe('log redaction', () => {
  it('replaces every credential-bearing field with [redacted]', () => {
    const lines: string[] = [];
    const logger = pino(
      { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
      new Writable({ write: (chunk: Buffer, _e, done) => void (lines.push(chunk.toString()), done()) }),
    );
    const values = Object.fromEntries(
      ['password', 'token', 'refreshToken', 'accessToken', 'plaintext', 'secret', 'clientSecret', 'totpCode', 'emailOtpCode', 'code', 'authorization', 'apiKey', 'newPassword', 'currentPassword', 'otpauthUri', 'param']
        .map((name) => [name, `${name}-${unique()}`]),
    );
    logger.info({
      password: values.password,
      input: { admin: { password: values.password }, refreshToken: values.refreshToken, code: values.code, newPassword: values.newPassword, currentPassword: values.currentPassword },
      body: { token: values.token, clientSecret: values.clientSecret, totpCode: values.totpCode, emailOtpCode: values.emailOtpCode },
      res: { accessToken: values.accessToken, plaintext: values.plaintext, secret: values.secret, otpauthUri: values.otpauthUri, apiKey: values.apiKey },
      req: { headers: { authorization: `Bearer ${values.authorization}` } },
      err: { params: [values.param] },
    });
    const line = lines.join('');
    expect(line).toContain('[redacted]');
    expect(Object.entries(values).filter(([, v]) => line.includes(v)).map(([k]) => k)).toEqual([]);
  });
});
