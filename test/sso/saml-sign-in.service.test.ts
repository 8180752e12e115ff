import { beforeAll, describe, expect, it } from 'vitest';
import type { SamlServiceProviderView, SsoConnectionView } from '../../src/services/sso/sso-connection-service.js';
import { unique } from '../helpers/api.js';
import { authnRequestIdOf, base64, forgingIdp, responseXml, signAssertion, type ForgingIdp } from '../helpers/saml-forge.js';
import { useServices, type ServiceTenant } from '../helpers/services.js';

/**
 * Below HTTP: enterprise single sign-on over SAML (SsoConnectionService, SsoEntry, SamlService,
 * SsoSignInService; docs/sso.md) with a test IdP that signs its own assertions: the connection of an
 * address's domain starts the sign-in, a signed answer is accepted once, its completion code signs the
 * person in once from the browser that started it, and a domain belongs to one connection.
 */

const suite = useServices();
let idp: ForgingIdp;

beforeAll(() => {
  idp = forgingIdp();
});

async function connected(): Promise<{ owner: ServiceTenant; connection: SsoConnectionView; sp: SamlServiceProviderView; domain: string }> {
  const owner = await suite.createTenant();
  const domain = `corp-${unique()}.example`;
  const connection = await suite.services.ssoConnections.create(suite.scope(owner.tenant, owner.actor), {
    name: 'Corp', protocol: 'saml', domains: [domain], saml: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem },
  }, { userId: owner.admin.id, sessionId: owner.tokens.sessionId });
  return { owner, connection, sp: connection.sp as SamlServiceProviderView, domain };
}

describe('SAML single sign-on', () => {
  it('signs a new person in once from a signed answer to the request their browser started', async () => {
    const { owner, connection, sp, domain } = await connected();
    const email = `alice@${domain}`;
    const redirect = await suite.services.ssoEntry.start(suite.em(), owner.tenant, email, 'browser-1');
    expect(redirect.startsWith(idp.ssoUrl)).toBe(true);
    const response = base64(signAssertion(idp, responseXml(idp, {
      inResponseTo: authnRequestIdOf(redirect), destination: sp.acsUrl, audience: sp.entityId, nameId: email,
    })));
    const { code, purpose } = await suite.services.saml.consumeResponse(suite.scope(owner.tenant), connection.id, response);
    expect(purpose).toBe('sign_in');
    await expect(suite.services.ssoSignIn.complete(suite.scope(owner.tenant), code, 'another-browser'))
      .rejects.toMatchObject({ details: { reason: 'browser_mismatch' } });

    // the refused attempt spent the code: it fails from the right browser too
    await expect(suite.services.ssoSignIn.complete(suite.scope(owner.tenant), code, 'browser-1'))
      .rejects.toMatchObject({ details: { reason: 'sso_completion_invalid' } });
    const again = await suite.services.ssoEntry.start(suite.em(), owner.tenant, email, 'browser-1');
    const second = await suite.services.saml.consumeResponse(suite.scope(owner.tenant), connection.id, base64(signAssertion(idp, responseXml(idp, {
      inResponseTo: authnRequestIdOf(again), destination: sp.acsUrl, audience: sp.entityId, nameId: email,
    }))));
    const { user, tokens } = await suite.services.ssoSignIn.complete(suite.scope(owner.tenant), second.code, 'browser-1');
    expect(user).toMatchObject({ email, role: 'Member', status: 'Active' });
    expect(user.emailVerifiedAt).not.toBeNull();
    expect(await suite.services.sessions.authenticationOf(suite.em(), owner.tenant.id, tokens.sessionId)).toMatchObject({ method: 'sso' });
    await expect(suite.services.ssoSignIn.complete(suite.scope(owner.tenant), second.code, 'browser-1'))
      .rejects.toMatchObject({ details: { reason: 'sso_completion_invalid' } });

    // the same signed answer again: its request was answered already
    await expect(suite.services.saml.consumeResponse(suite.scope(owner.tenant), connection.id, response)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('refuses an answer tampered after signing, and one not signed by the connection\'s IdP', async () => {
    const { owner, connection, sp, domain } = await connected();
    const fields = (id: string) => ({ inResponseTo: id, destination: sp.acsUrl, audience: sp.entityId, nameId: `bob@${domain}` });
    const first = authnRequestIdOf(await suite.services.ssoEntry.start(suite.em(), owner.tenant, `bob@${domain}`, 'b'));
    const tampered = base64(signAssertion(idp, responseXml(idp, fields(first))).replace(`bob@${domain}`, `eve@${domain}`));
    await expect(suite.services.saml.consumeResponse(suite.scope(owner.tenant), connection.id, tampered))
      .rejects.toMatchObject({ details: { reason: 'saml_signature_invalid' } });
    const second = authnRequestIdOf(await suite.services.ssoEntry.start(suite.em(), owner.tenant, `bob@${domain}`, 'b'));
    const impostor = base64(signAssertion(forgingIdp(idp.entityId), responseXml(idp, fields(second))));
    await expect(suite.services.saml.consumeResponse(suite.scope(owner.tenant), connection.id, impostor))
      .rejects.toMatchObject({ details: { reason: 'saml_signature_invalid' } });
    expect((await suite.auditOf(owner.tenant.id, 'UserLoginFailed')).length).toBe(2);
  });

  it('gives each domain one connection, and no connection serves another domain or workspace', async () => {
    const { owner, domain } = await connected();
    await expect(suite.services.ssoConnections.create(suite.scope(owner.tenant, owner.actor), {
      name: 'Again', protocol: 'saml', domains: [domain], saml: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem },
    }, { userId: owner.admin.id, sessionId: owner.tokens.sessionId })).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'sso_domain_taken' } });
    await expect(suite.services.ssoEntry.start(suite.em(), owner.tenant, `alice@other-${domain}`, 'b'))
      .rejects.toMatchObject({ details: { reason: 'sso_connection_not_found' } });
    const other = await suite.createTenant();
    await expect(suite.services.ssoEntry.start(suite.em(), other.tenant, `alice@${domain}`, 'b'))
      .rejects.toMatchObject({ details: { reason: 'sso_connection_not_found' } });
  });
});
