import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { authnRequestIdOf, base64, forgingIdp, responseXml, signAssertion, type ForgingIdp } from '../helpers/saml-forge.js';
import { Authenticator } from '../helpers/totp.js';
import { hasSimpleSamlPhp, signInAtSimpleSaml, startSimpleSamlIdp, type SimpleSamlIdp } from '../support/simplesamlphp.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * Enterprise single sign-on with SAML 2.0 (docs/sso.md): connections, the SP-initiated sign-in
 * against a real SimpleSAMLphp identity provider, and every refusal of the assertion consumer
 * service against responses a forging IdP writes and signs with xml-crypto.
 */

// private targets allowed: the SimpleSAMLphp IdP's metadata URL is on 127.0.0.1
const suite = useTestServerAtPublicUrl({ IDP_ALLOW_PRIVATE_ISSUERS: 'true' });

type Connection = { id: string; domains: string[]; sp: { entityId: string; acsUrl: string; metadataUrl: string }; saml: { idpEntityId: string } };

async function createConnection(tenant: TestTenant, idp: Pick<ForgingIdp, 'entityId' | 'ssoUrl' | 'certificatePem'>, extra: Record<string, unknown> = {}) {
  const domain = `corp-${unique()}.example`;
  const res = await suite.api.post(`/v1/${tenant.slug}/sso-connections`, {
    name: 'Corp', protocol: 'saml', domains: [domain],
    saml: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem }, ...extra,
  }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { connection: res.body.connection as Connection, domain };
}

/** `POST sso/start` as a browser: the IdP URL and the binding cookie. */
async function start(tenant: TestTenant, email: string, returnTo?: string) {
  const res = await fetch(`${suite.server.url}/v1/${tenant.slug}/sso/start`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, ...(returnTo ? { returnTo } : {}) }),
  });
  const body = (await res.json()) as { redirectUrl: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  expect(cookie).toMatch(new RegExp(`^sso_binding_${tenant.slug}=`));
  return { redirectUrl: body.redirectUrl, cookie, requestId: authnRequestIdOf(body.redirectUrl) };
}

/** Posts a SAMLResponse to an ACS as the IdP's auto-submitting form would; returns the fragment of the page it sends the browser to. */
async function postToAcs(acsUrl: string, samlResponse: string): Promise<URLSearchParams> {
  const res = await fetch(acsUrl, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ SAMLResponse: samlResponse }) });
  expect(res.status).toBe(303);
  const location = res.headers.get('location') ?? '';
  expect(location).toMatch(/^\/app\/[a-z0-9-]+\/(sso-callback|admin\/sso\/[0-9a-f-]+)#/);
  return new URLSearchParams(location.slice(location.indexOf('#') + 1));
}

/** `browser.ssoComplete` from the hosted page with the browser's cookie. */
async function complete(tenant: TestTenant, code: string, cookie?: string) {
  const res = await fetch(`${suite.server.url}/trpc/browser.ssoComplete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ tenantSlug: tenant.slug, code }),
  });
  return { status: res.status, body: (await res.json()) as { result?: { data: { accessToken: string; user: { id: string; email: string }; returnTo: string | null } }; error?: { data?: { details?: { reason?: string } }; message: string } } };
}

async function auditReasons(tenant: TestTenant): Promise<string[]> {
  const res = await suite.api.get(`/v1/${tenant.slug}/audit?action=UserLoginFailed`, { token: tenant.accessToken });
  return (res.body.items as { details: { reason: string } }[]).map((event) => event.details.reason);
}

describe('SSO connections', () => {
  it('are created, read, changed and deleted by a signed-in Admin only, audited, with one connection per domain', async () => {
    const tenant = await createTenant(suite.api);
    const idp = forgingIdp();
    const { connection, domain } = await createConnection(tenant, idp);
    expect(connection.sp.acsUrl).toBe(`${suite.publicUrl}/v1/${tenant.slug}/sso/${connection.id}/saml/acs`);
    expect(connection.sp.entityId).toBe(connection.sp.metadataUrl);
    expect(JSON.stringify(connection)).not.toContain('PRIVATE KEY');

    expect((await suite.api.get(`/v1/${tenant.slug}/sign-in-options`)).body.enterpriseSso).toBe(true);
    const metadata = await fetch(connection.sp.metadataUrl);
    expect(metadata.status).toBe(200);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${connection.sp.entityId}"`);
    expect(xml).toContain(`Location="${connection.sp.acsUrl}"`);

    expectError(await suite.api.post(`/v1/${tenant.slug}/sso-connections`, {
      name: 'Other', protocol: 'saml', domains: [domain], saml: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem },
    }, { token: tenant.accessToken }), 409, 'CONFLICT', 'sso_domain_taken');
    expectError(await suite.api.post(`/v1/${tenant.slug}/sso-connections`, {
      name: 'Bad', protocol: 'saml', domains: [`x-${unique()}.example`], saml: { metadataXml: '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>' },
    }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'invalid_saml_metadata');
    expectError(await suite.api.post(`/v1/${tenant.slug}/sso-connections`, {
      name: 'Bad', protocol: 'saml', domains: [`x-${unique()}.example`], saml: { entityId: 'x', ssoUrl: 'http://idp.example.test/sso', certificate: idp.certificatePem },
    }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'invalid_sso_url');

    // an API key, even live, and a Member may not change connections; another workspace sees none
    const key = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'live', environment: 'live' }, { token: tenant.accessToken });
    expectError(await suite.api.patch(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { name: 'Mine' }, { token: key.body.plaintext }), 403, 'FORBIDDEN', 'admin_session_required');
    const member = await signupMember(suite.api, tenant.slug);
    expectError(await suite.api.get(`/v1/${tenant.slug}/sso-connections`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    const other = await createTenant(suite.api);
    expectError(await suite.api.get(`/v1/${other.slug}/sso-connections/${connection.id}`, { token: other.accessToken }), 404, 'NOT_FOUND');

    const renamed = await suite.api.patch(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { name: 'Corp SSO', domains: [domain, `b-${domain}`] }, { token: tenant.accessToken });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.connection).toMatchObject({ name: 'Corp SSO', domains: [`b-${domain}`, domain].sort() });
    expect((await suite.api.get(`/v1/${tenant.slug}/sso-connections`, { token: tenant.accessToken })).body.items).toHaveLength(1);
    expect((await suite.api.delete(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { token: tenant.accessToken })).body).toEqual({ ok: true });
    expectError(await suite.api.post(`/v1/${tenant.slug}/sso/start`, { email: `alice@${domain}` }), 404, 'NOT_FOUND', 'sso_connection_not_found');
    for (const action of ['SsoConnectionCreated', 'SsoConnectionUpdated', 'SsoConnectionDeleted']) {
      const events = (await suite.api.get(`/v1/${tenant.slug}/audit?action=${action}`, { token: tenant.accessToken })).body.items as { targetId: string; actorId: string }[];
      expect(events.some((e) => e.targetId === connection.id && e.actorId === tenant.adminId), action).toBe(true);
    }
  });
});

describe('the assertion consumer service', () => {
  let tenant: TestTenant;
  let idp: ForgingIdp;
  let connection: Connection;
  let domain: string;

  beforeAll(async () => {
    tenant = await createTenant(suite.api);
    idp = forgingIdp();
    ({ connection, domain } = await createConnection(tenant, idp));
  });

  function fields(requestId: string | undefined, overrides: Partial<Parameters<typeof responseXml>[1]> = {}) {
    return { inResponseTo: requestId, destination: connection.sp.acsUrl, audience: connection.sp.entityId, nameId: `alice@${domain}`, ...overrides };
  }

  it('accepts a signed answer to a request of this browser once: a new user, verified, signed in; the code works only with the cookie, once', async () => {
    const { requestId } = await start(tenant, `alice@${domain}`, '/app/somewhere');
    const answer = await postToAcs(connection.sp.acsUrl, base64(signAssertion(idp, responseXml(idp, fields(requestId)))));
    const code = answer.get('code');
    expect(code, answer.toString()).toBeTruthy();
    expect((await complete(tenant, code!)).body.error?.data?.details?.reason).toBe('browser_mismatch');

    const { requestId: second, cookie: secondCookie } = await start(tenant, `alice@${domain}`, '/app/somewhere');
    const code2 = (await postToAcs(connection.sp.acsUrl, base64(signAssertion(idp, responseXml(idp, fields(second)))))).get('code')!;
    const signedIn = await complete(tenant, code2, secondCookie);
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body.result?.data).toMatchObject({ user: { email: `alice@${domain}` }, returnTo: '/app/somewhere' });
    expect((await complete(tenant, code2, secondCookie)).body.error?.data?.details?.reason).toBe('sso_completion_invalid');

    const me = await suite.api.get(`/v1/${tenant.slug}/me`, { token: signedIn.body.result!.data.accessToken });
    expect(me.body).toMatchObject({ email: `alice@${domain}`, role: 'Member' });
    expect(me.body.emailVerifiedAt ?? me.body.emailVerified).toBeTruthy();
    const logins = (await suite.api.get(`/v1/${tenant.slug}/audit?action=UserLogin`, { token: tenant.accessToken })).body.items as { details: { method: string } }[];
    expect(logins.some((e) => e.details.method === 'sso')).toBe(true);
  });

  it.each([
    ['a tampered assertion', 'saml_signature_invalid', (id: string) => base64(signAssertion(idp, responseXml(idp, fields(id))).replace(`alice@${domain}`, `eve@${domain}`))],
    ['an assertion signed by another key', 'saml_signature_invalid', (id: string) => base64(signAssertion(forgingIdp(idp.entityId), responseXml(idp, fields(id))))],
    ['an unsigned assertion', 'saml_signature_invalid', (id: string) => base64(responseXml(idp, fields(id)))],
    ['a wrapped assertion (the signed one hidden, an unsigned one in its place)', 'saml_signature_invalid', (id: string) => {
      const signed = signAssertion(idp, responseXml(idp, fields(id)));
      const genuine = signed.slice(signed.indexOf('<saml:Assertion'), signed.indexOf('</saml:Assertion>') + '</saml:Assertion>'.length);
      const evil = responseXml(idp, fields(id, { nameId: `eve@${domain}` }));
      const evilAssertion = evil.slice(evil.indexOf('<saml:Assertion'), evil.indexOf('</saml:Assertion>') + '</saml:Assertion>'.length);
      return base64(signed.replace(genuine, `<samlp:Extensions>${genuine}</samlp:Extensions>${evilAssertion}`));
    }],
    ['another audience', 'saml_audience_mismatch', (id: string) => base64(signAssertion(idp, responseXml(idp, fields(id, { audience: 'https://other.example.test/sp' }))))],
    ['another recipient', 'saml_recipient_mismatch', (id: string) => base64(signAssertion(idp, responseXml(idp, fields(id, { recipient: 'https://other.example.test/acs' }))))],
    ['an expired assertion', 'saml_assertion_expired', (id: string) => base64(signAssertion(idp, responseXml(idp, fields(id, { validForMs: -600_000 }))))],
    ['an unsolicited response', 'sso_request_unknown', () => base64(signAssertion(idp, responseXml(idp, fields(undefined))))],
    ['an answer to another request', 'sso_request_unknown', () => base64(signAssertion(idp, responseXml(idp, fields('_never-sent'))))],
    ['an address of another domain', 'sso_email_domain_mismatch', (id: string) => base64(signAssertion(idp, responseXml(idp, fields(id, { nameId: 'eve@elsewhere.example' }))))],
    ['a DTD', 'saml_response_invalid', (id: string) => base64(`<!DOCTYPE r [<!ENTITY e "x">]>${signAssertion(idp, responseXml(idp, fields(id)))}`)],
  ])('refuses %s (%s), audited', async (name, reason, build) => {
    const { requestId } = await start(tenant, `alice@${domain}`);
    const refused = await postToAcs(connection.sp.acsUrl, build(requestId));
    expect(refused.get('error')).toBe(reason);
    expect(await auditReasons(tenant)).toContain(reason);
    const genuine = await postToAcs(connection.sp.acsUrl, base64(signAssertion(idp, responseXml(idp, fields(requestId)))));
    if (/unsolicited|another request|DTD/.test(name)) {
      // the refused document named no request of this browser (or was not read): the request is still open
      expect(genuine.get('code')).toBeTruthy();
    } else {
      // the request was answered: even a genuine answer to it is refused now
      expect(genuine.get('error')).toBe('sso_request_unknown');
    }
  });

  it('an Admin\'s test shows what the IdP sent on the console page and signs no one in; refusals are listed on the connection', async () => {
    const started = await fetch(`${suite.server.url}/v1/${tenant.slug}/sso-connections/${connection.id}/test`, {
      method: 'POST', headers: { authorization: `Bearer ${tenant.accessToken}`, 'content-type': 'application/json' }, body: '{}',
    });
    expect(started.status, await started.clone().text()).toBe(200);
    const { redirectUrl } = (await started.json()) as { redirectUrl: string };
    const cookie = started.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const requestId = authnRequestIdOf(redirectUrl);
    const withAttribute = (id: string) => responseXml(idp, fields(id)).replace(
      '</saml:Assertion>',
      '<saml:AttributeStatement><saml:Attribute Name="department"><saml:AttributeValue>Finance</saml:AttributeValue><saml:AttributeValue>Audit</saml:AttributeValue></saml:Attribute></saml:AttributeStatement></saml:Assertion>',
    );
    const res = await fetch(connection.sp.acsUrl, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ SAMLResponse: base64(signAssertion(idp, withAttribute(requestId))) }),
    });
    const location = res.headers.get('location') ?? '';
    expect(location.startsWith(`/app/${tenant.slug}/admin/sso/${connection.id}#code=`)).toBe(true);
    const code = new URLSearchParams(location.slice(location.indexOf('#') + 1)).get('code')!;
    // a test's code never signs anyone in
    expect((await complete(tenant, code, cookie)).body.error?.data?.details?.reason).toBe('sso_completion_invalid');

    const again = await fetch(`${suite.server.url}/v1/${tenant.slug}/sso-connections/${connection.id}/test`, {
      method: 'POST', headers: { authorization: `Bearer ${tenant.accessToken}`, 'content-type': 'application/json' }, body: '{}',
    });
    const againCookie = again.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const againId = authnRequestIdOf(((await again.json()) as { redirectUrl: string }).redirectUrl);
    const fragment = await postToAcs(connection.sp.acsUrl, base64(signAssertion(idp, withAttribute(againId))));
    const result = await fetch(`${suite.server.url}/v1/${tenant.slug}/sso-connections/test-result`, {
      method: 'POST', headers: { authorization: `Bearer ${tenant.accessToken}`, 'content-type': 'application/json', cookie: againCookie },
      body: JSON.stringify({ code: fragment.get('code') }),
    });
    expect(result.status, await result.clone().text()).toBe(200);
    expect(await result.json()).toMatchObject({ connectionId: connection.id, email: `alice@${domain}`, attributes: { department: ['Finance', 'Audit'] } });

    // a refused test lands on the console page too, and the connection lists the refusal
    const third = await fetch(`${suite.server.url}/v1/${tenant.slug}/sso-connections/${connection.id}/test`, {
      method: 'POST', headers: { authorization: `Bearer ${tenant.accessToken}`, 'content-type': 'application/json' }, body: '{}',
    });
    const thirdId = authnRequestIdOf(((await third.json()) as { redirectUrl: string }).redirectUrl);
    const refused = await fetch(connection.sp.acsUrl, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ SAMLResponse: base64(signAssertion(idp, responseXml(idp, fields(thirdId, { audience: 'https://wrong.example.test' })))) }),
    });
    expect(refused.headers.get('location')).toBe(`/app/${tenant.slug}/admin/sso/${connection.id}#error=saml_audience_mismatch`);
    const read = await suite.api.get(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { token: tenant.accessToken });
    expect(read.body.recentFailures[0]).toMatchObject({ reason: 'saml_audience_mismatch' });
  });

  it('a connection that says its provider performs MFA never waives an authenticator the person enrolled here (a second Admin\'s connection cannot sign in as its owner)', async () => {
    const owner = await createTenant(suite.api);
    const ownerIdp = forgingIdp();
    const { connection: rogue, domain: ownerDomain } = await createConnection(owner, ownerIdp, { providerPerformsMfa: true });
    const victim = await signupMember(suite.api, owner.slug, `victim@${ownerDomain}`);
    const enroll = await suite.api.post(`/v1/${owner.slug}/mfa/totp/enroll`, undefined, { token: victim.accessToken });
    const authenticator = new Authenticator(enroll.body.secret);
    expect((await suite.api.post(`/v1/${owner.slug}/mfa/totp/verify`, { code: await authenticator.nextCode() }, { token: victim.accessToken })).status).toBe(200);
    const answerFor = async () => {
      const { requestId, cookie } = await start(owner, victim.email);
      const fragment = await postToAcs(rogue.sp.acsUrl, base64(signAssertion(ownerIdp, responseXml(ownerIdp, {
        inResponseTo: requestId, destination: rogue.sp.acsUrl, audience: rogue.sp.entityId, nameId: victim.email,
      }))));
      return complete(owner, fragment.get('code')!, cookie);
    };
    // an account with its own factor and an address never verified is not taken over
    expect((await answerFor()).body.error?.data?.details?.reason).toBe('sso_account_protected');
    // with its address verified it is linked, and its authenticator is still asked for
    await suite.server.services.orm.em.fork().execute('update app_user set email_verified_at = now() where id = ?', [victim.id]);
    const done = await answerFor();
    expect(done.status).toBe(401);
    expect(done.body.error?.data?.details?.reason).toBe('mfa_required');
  });

  it('the retention sweep deletes expired requests and assertion ids of every workspace, and keeps open ones', async () => {
    const open = await start(tenant, `alice@${domain}`);
    const em = suite.server.services.orm.em.fork();
    await em.execute(
      `insert into sso_auth_request (id, tenant_id, connection_id, request_id, browser_binding_hash, purpose, created_at, expires_at)
       values (gen_random_uuid(), ?, ?, '_expired-request', repeat('0', 64), 'sign_in', now() - interval '1 hour', now() - interval '50 minutes')`,
      [tenant.id, connection.id],
    );
    await em.execute(`insert into sso_assertion (connection_id, assertion_id, tenant_id, expires_at) values (?, '_expired-assertion', ?, now() - interval '1 minute')`, [
      connection.id, tenant.id,
    ]);
    expect(await suite.server.services.ssoEntry.sweepExpired(em)).toBeGreaterThanOrEqual(2);
    expect(await em.execute(`select 1 from sso_auth_request where request_id in ('_expired-request')`)).toHaveLength(0);
    expect(await em.execute(`select 1 from sso_assertion where assertion_id = '_expired-assertion'`)).toHaveLength(0);
    expect(await em.execute('select 1 from sso_auth_request where request_id = ?', [open.requestId])).toHaveLength(1);
  });

  it('refuses a replayed assertion (same assertion id) in an answer to a new request, and another workspace\'s answer', async () => {
    const first = await start(tenant, `alice@${domain}`);
    const assertionId = `_a${unique()}`;
    expect((await postToAcs(connection.sp.acsUrl, base64(signAssertion(idp, responseXml(idp, fields(first.requestId, { assertionId })))))).get('code')).toBeTruthy();
    const second = await start(tenant, `alice@${domain}`);
    expect((await postToAcs(connection.sp.acsUrl, base64(signAssertion(idp, responseXml(idp, fields(second.requestId, { assertionId })))))).get('error')).toBe('saml_assertion_replayed');

    // the same IdP serves another workspace: its answer, posted to this workspace's ACS, answers no request here
    const other = await createTenant(suite.api);
    const { connection: otherConnection, domain: otherDomain } = await createConnection(other, idp);
    const theirs = await start(other, `bob@${otherDomain}`);
    const forThem = base64(signAssertion(idp, responseXml(idp, {
      inResponseTo: theirs.requestId, destination: otherConnection.sp.acsUrl, audience: otherConnection.sp.entityId, nameId: `bob@${otherDomain}`,
    })));
    expect((await postToAcs(connection.sp.acsUrl, forThem)).get('error')).toBe('sso_request_unknown');
  });
});

describe.skipIf(!hasSimpleSamlPhp())('sign-in with a real SAML identity provider (SimpleSAMLphp)', () => {
  let simpleSaml: SimpleSamlIdp | undefined;
  afterAll(async () => {
    await simpleSaml?.stop();
  });

  it('signs a person in from the IdP\'s login form: new user in the connection\'s organization with its roles; the next sign-in finds the same user; an existing account is linked', async () => {
    const tenant = await createTenant(suite.api);
    const org = await suite.api.post(`/v1/${tenant.slug}/organizations`, { name: 'Corp Inc' }, { token: tenant.accessToken });
    await suite.api.post(`/v1/${tenant.slug}/organization-roles`, { name: 'viewer', permissions: ['read:reports'] }, { token: tenant.accessToken });
    // a placeholder provider first: the SP values (entity id, ACS URL) exist once the connection does
    const { connection, domain } = await createConnection(tenant, forgingIdp(), { organizationId: org.body.organization.id, defaultOrganizationRoles: ['viewer'] });
    const alice = { username: 'alice', password: 'alice password', email: `alice@${domain}`, name: 'Alice Corp' };
    const carol = { username: 'carol', password: 'carol password', email: `carol@${domain}` };
    simpleSaml = await startSimpleSamlIdp({ sp: [{ entityId: connection.sp.entityId, acsUrl: connection.sp.acsUrl }], users: [alice, carol] });
    const updated = await suite.api.patch(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { saml: { metadataUrl: `${simpleSaml.baseUrl}saml2/idp/metadata.php` } }, { token: tenant.accessToken });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.connection.saml).toMatchObject({ idpEntityId: simpleSaml.entityId, metadataUrl: `${simpleSaml.baseUrl}saml2/idp/metadata.php` });

    const signIn = async (person: { username: string; password: string; email: string }) => {
      const { redirectUrl, cookie } = await start(tenant, person.email);
      expect(redirectUrl.startsWith(simpleSaml!.ssoUrl)).toBe(true);
      const answer = await signInAtSimpleSaml(redirectUrl, person.username, person.password);
      expect(answer.acsUrl).toBe(connection.sp.acsUrl);
      const fragment = await postToAcs(answer.acsUrl, answer.SAMLResponse);
      expect(fragment.get('error')).toBeNull();
      const done = await complete(tenant, fragment.get('code')!, cookie);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      return done.body.result!.data;
    };

    const first = await signIn(alice);
    expect(first.user.email).toBe(alice.email);
    const organizations = await suite.api.get(`/v1/${tenant.slug}/me/organizations`, { token: first.accessToken });
    expect(organizations.status, JSON.stringify(organizations.body)).toBe(200);
    expect(JSON.stringify(organizations.body)).toContain('viewer');
    const again = await signIn(alice);
    expect(again.user.id).toBe(first.user.id);

    // carol had signed up with a password and verified nothing: the IdP's proof takes the account over
    const preRegistered = await signupMember(suite.api, tenant.slug, carol.email);
    const carolIn = await signIn(carol);
    expect(carolIn.user.id).toBe(preRegistered.id);
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: carol.email, password: PASSWORD }), 401, 'UNAUTHORIZED');
  });

  it('signs AuthnRequests with the connection\'s SP key and reads assertions encrypted to its certificate, when the IdP demands both', async () => {
    const tenant = await createTenant(suite.api);
    const { connection, domain } = await createConnection(tenant, forgingIdp(), { signAuthnRequests: true });
    const spCertificate = (connection.sp as unknown as { certificate: string }).certificate;
    expect(spCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const metadata = await (await fetch(connection.sp.metadataUrl)).text();
    expect(metadata).toContain('AuthnRequestsSigned="true"');
    expect(metadata).toContain('use="encryption"');
    expect(metadata.replace(/\s/g, '')).toContain(spCertificate.replace(/-----[^-]+-----|\s/g, ''));
    const erin = { username: 'erin', password: 'erin password', email: `erin@${domain}` };
    const strict = await startSimpleSamlIdp({
      sp: [{ entityId: connection.sp.entityId, acsUrl: connection.sp.acsUrl, certificatePem: spCertificate, signedRequests: true, encryptAssertions: true }],
      users: [erin],
    });
    try {
      expect((await suite.api.patch(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { saml: { metadataXml: strict.metadataXml } }, { token: tenant.accessToken })).status).toBe(200);
      const { redirectUrl, cookie } = await start(tenant, erin.email);
      expect(new URL(redirectUrl).searchParams.get('Signature')).toBeTruthy();
      const answer = await signInAtSimpleSaml(redirectUrl, erin.username, erin.password);
      expect(Buffer.from(answer.SAMLResponse, 'base64').toString('utf8')).toContain('EncryptedAssertion');
      const fragment = await postToAcs(answer.acsUrl, answer.SAMLResponse);
      expect(fragment.get('error')).toBeNull();
      const done = await complete(tenant, fragment.get('code')!, cookie);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body.result!.data.user.email).toBe(erin.email);

      // unsigned requests are refused by this IdP: the signature above is what let the person in
      await suite.api.patch(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { signAuthnRequests: false }, { token: tenant.accessToken });
      const unsigned = await start(tenant, erin.email);
      expect(new URL(unsigned.redirectUrl).searchParams.get('Signature')).toBeNull();
      await expect(signInAtSimpleSaml(unsigned.redirectUrl, erin.username, erin.password)).rejects.toThrow();
    } finally {
      await strict.stop();
    }
  });
});
