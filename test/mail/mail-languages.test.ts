import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, PASSWORD, unique } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.js';

const PUBLIC_URL = 'https://id.example.test';

let server: TestServer;
let sink: SmtpSink;
let api: Api;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ SMTP_URL: sink.url, PUBLIC_URL });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

/** What no mail may say: placeholders left over, API talk, "(s)" plurals, ISO timestamps. */
function expectReadsLikeAProduct(mail: ReceivedMail): void {
  for (const part of [mail.subject, mail.text]) {
    expect(part).not.toMatch(/\{\{|\}\}/);
    expect(part).not.toMatch(/\btenant\b/i);
    expect(part).not.toMatch(/\(s\)/);
    expect(part).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(part).not.toMatch(/send (this|the) token|POST |DELETE /i);
  }
  expect(mail.html).toMatch(/^<!doctype html><html lang="(en|de|fr|es)">/);
}

describe('mails in the person\'s language', () => {
  it('speaks the language of the request that asked for it: a German sign-up, a French password reset', async () => {
    const tenant = await createTenant(api, `Acme ${unique()}`);
    const email = `lang-${unique()}@example.com`;
    const signup = await api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: PASSWORD }, { headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' } });
    expect(signup.status).toBe(200);

    // the verification mail of the German sign-up is German
    await api.post(`/v1/${tenant.slug}/auth/request-email-verification`, { email }, { headers: { 'accept-language': 'de' } });
    const verify = await sink.waitFor(email, (m) => m.subject.startsWith('Bestätigen Sie Ihre E-Mail-Adresse'));
    expect(verify.text).toContain('Bitte bestätigen Sie, dass');
    expect(verify.text).toContain('E-Mail-Adresse bestätigen: https://id.example.test/app/');
    expect(verify.text).toContain('24 Stunden');
    expect(verify.html).toContain('<html lang="de">');
    expectReadsLikeAProduct(verify);

    // a reset asked for from a French page is French, though the person signed up in German
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email }, { headers: { 'accept-language': 'fr-CH, fr;q=0.9' } });
    const reset = await sink.waitFor(email, (m) => m.subject.startsWith('Réinitialisez votre mot de passe'));
    expect(reset.text).toContain('Choisir un nouveau mot de passe: https://id.example.test/app/');
    expect(reset.text).toMatch(/expire dans 1\sheure/);
    expectReadsLikeAProduct(reset);

    // without Accept-Language the person's own language (from the German sign-up) applies
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email });
    const resetDe = await sink.waitFor(email, (m) => m.subject.startsWith('Setzen Sie Ihr Passwort'));
    expect(resetDe.text).toMatch(/läuft in 1\sStunde ab/);
  });

  it('uses the workspace\'s default language for an invitation and for requests that name no language of ours', async () => {
    const tenant = await createTenant(api, `Acme ${unique()}`);
    const patched = await api.patch(`/v1/${tenant.slug}/tenant`, { defaultLocale: 'fr' }, { token: tenant.accessToken });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.defaultLocale).toBe('fr');
    expect((await api.get(`/v1/${tenant.slug}/sign-in-options`)).body).toMatchObject({ defaultLocale: 'fr' });

    const invitee = `invitee-${unique()}@example.com`;
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: invitee, role: 'Admin' }, { token: tenant.accessToken, headers: { 'accept-language': 'de' } });
    expect(invite.status, JSON.stringify(invite.body)).toBe(200);
    const mail = await sink.waitFor(invitee);
    expect(mail.subject).toMatch(/^Vous êtes invité à rejoindre "/);
    expect(mail.text).toContain('en tant qu’admin');
    expect(mail.text).toMatch(/valable jusqu’au \p{L}+ \d{1,2} \p{L}+ \d{4} à \d{2}:\d{2} UTC/u);
    expect(mail.text).toContain('Accepter l’invitation: https://id.example.test/app/');
    expectReadsLikeAProduct(mail);

    // an Italian browser gets the workspace's default too
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: tenant.adminEmail }, { headers: { 'accept-language': 'it-IT' } });
    const reset = await sink.waitFor(tenant.adminEmail, (m) => m.subject.startsWith('Réinitialisez'));
    expectReadsLikeAProduct(reset);
  });

  it('speaks Spanish: a workspace whose default is Spanish invites in Spanish, and a Spanish browser gets Spanish mails anywhere', async () => {
    const tenant = await createTenant(api, `Acme ${unique()}`);
    const patched = await api.patch(`/v1/${tenant.slug}/tenant`, { defaultLocale: 'es' }, { token: tenant.accessToken });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.defaultLocale).toBe('es');
    expect((await api.get(`/v1/${tenant.slug}/sign-in-options`)).body).toMatchObject({ defaultLocale: 'es' });
    expect((await api.get(`/v1/${tenant.slug}/tenant`, { token: tenant.accessToken })).body).toMatchObject({ defaultLocale: 'es' });

    const invitee = `invitado-${unique()}@example.com`;
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: invitee, role: 'Member' }, { token: tenant.accessToken, headers: { 'accept-language': 'de' } });
    expect(invite.status, JSON.stringify(invite.body)).toBe(200);
    const mail = await sink.waitFor(invitee);
    expect(mail.subject).toMatch(/^Te han invitado a unirte a "/);
    expect(mail.text).toContain('como miembro.');
    expect(mail.text).toContain('Aceptar la invitación: https://id.example.test/app/');
    expect(mail.html).toContain('<html lang="es">');
    expectReadsLikeAProduct(mail);

    // in a workspace whose default is English, a sign-up from a Spanish browser makes Spanish mails the person's own
    const other = await createTenant(api, `Acme ${unique()}`);
    const email = `es-${unique()}@example.com`;
    expect((await api.post(`/v1/${other.slug}/auth/signup`, { email, password: PASSWORD }, { headers: { 'accept-language': 'es-AR,es;q=0.9,en;q=0.5' } })).status).toBe(200);
    await api.post(`/v1/${other.slug}/auth/request-email-verification`, { email }, { headers: { 'accept-language': 'es' } });
    const verify = await sink.waitFor(email, (m) => m.subject.startsWith('Confirma tu dirección de correo'));
    expect(verify.text).toContain('Confirmar dirección de correo: https://id.example.test/app/');
    expect(verify.text).toContain('24 horas');
    expectReadsLikeAProduct(verify);
    await api.post(`/v1/${other.slug}/auth/password-reset/request`, { email });
    const reset = await sink.waitFor(email, (m) => m.subject.startsWith('Restablece tu contraseña'));
    expect(reset.text).toMatch(/caduca en 1\shora/);
    expectReadsLikeAProduct(reset);
  });

  it('refuses a language the service does not speak', async () => {
    const tenant = await createTenant(api, `Acme ${unique()}`);
    const res = await api.patch(`/v1/${tenant.slug}/tenant`, { defaultLocale: 'it' }, { token: tenant.accessToken });
    expect(res.status).toBe(400);
  });

  it('writes English mails a person reads as a product\'s: buttons, lifetimes in words, no API talk', async () => {
    const tenant = await createTenant(api, `Acme ${unique()}`);
    const email = `en-${unique()}@example.com`;
    expect((await api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: PASSWORD })).status).toBe(200);
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email }, { headers: { 'accept-language': 'en-GB' } });
    const reset = await sink.waitFor(email, (m) => m.subject.startsWith('Reset your password'));
    expect(reset.text).toContain('The link works once and expires in 1 hour.');
    expect(reset.html).toMatch(/<a href="https:\/\/id\.example\.test\/app\/[^"]+" style="display:inline-block;background:#1d4ed8/);
    expectReadsLikeAProduct(reset);
  });
});
