import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SAML } from '@node-saml/node-saml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasSimpleSamlPhp, signInAtSimpleSaml, startSimpleSamlIdp, type SimpleSamlIdp } from './simplesamlphp.js';

/**
 * The SimpleSAMLphp harness itself: a real IdP signs in a user for an SP whose AuthnRequest and
 * response validation are @node-saml/node-saml's, so the SAML SP tests can trust it.
 */
describe.skipIf(!hasSimpleSamlPhp())('SimpleSAMLphp test IdP', () => {
  const spEntityId = 'https://sp.example.test/saml/metadata';
  const acsUrl = 'http://127.0.0.1:9/saml/acs';
  const alice = { username: 'alice', password: 'correct horse', email: 'alice@example.test', name: 'Alice Example' };
  let idp: SimpleSamlIdp | undefined;

  beforeAll(async () => {
    idp = await startSimpleSamlIdp({ sp: [{ entityId: spEntityId, acsUrl }], users: [alice] });
  });

  afterAll(async () => {
    await idp?.stop();
  });

  const harnessDirs = (): string[] => readdirSync(os.tmpdir()).filter((name) => name.startsWith('simplesamlphp-'));

  function sp(options: { wantAuthnResponseSigned?: boolean } = {}): SAML {
    if (!idp) throw new Error('IdP not started');
    return new SAML({
      entryPoint: idp.ssoUrl,
      issuer: spEntityId,
      callbackUrl: acsUrl,
      idpCert: idp.certificatePem,
      audience: spEntityId,
      wantAuthnResponseSigned: options.wantAuthnResponseSigned ?? false,
      wantAssertionsSigned: true,
    });
  }

  it('serves its metadata with its entity id, signing certificate and redirect SSO endpoint', () => {
    const { entityId, ssoUrl, metadataXml, certificatePem } = idp!;
    expect(metadataXml).toContain(`entityID="${entityId}"`);
    expect(metadataXml).toContain(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${ssoUrl}"`);
    const base64 = certificatePem.replace(/-----[^-]+-----|\s/g, '');
    expect(metadataXml.replace(/\s/g, '')).toContain(base64);
  });

  it('signs a user in for the SP: node-saml accepts the signed response and reads the email as NameID', async () => {
    const saml = sp({ wantAuthnResponseSigned: true });
    const url = await saml.getAuthorizeUrlAsync('relay-123', undefined, {});
    const answer = await signInAtSimpleSaml(url, alice.username, alice.password);
    expect(answer.acsUrl).toBe(acsUrl);
    expect(answer.RelayState).toBe('relay-123');

    const { profile, loggedOut } = await saml.validatePostResponseAsync({ SAMLResponse: answer.SAMLResponse });
    expect(loggedOut).toBe(false);
    expect(profile).toMatchObject({
      issuer: idp!.entityId,
      nameID: alice.email,
      nameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      email: alice.email,
      name: alice.name,
      uid: alice.username,
    });
  });

  it('answers an AuthnRequest without RelayState with none, and node-saml needs only the signed assertion', async () => {
    const saml = sp();
    const answer = await signInAtSimpleSaml(await saml.getAuthorizeUrlAsync('', undefined, {}), alice.username, alice.password);
    expect(answer.RelayState).toBeUndefined();
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: answer.SAMLResponse });
    expect(profile?.nameID).toBe(alice.email);
  });

  it('refuses a wrong password: the login form comes back', async () => {
    const url = await sp().getAuthorizeUrlAsync('', undefined, {});
    await expect(signInAtSimpleSaml(url, alice.username, 'wrong password')).rejects.toThrow(/Incorrect username or password/);
  });

  it('rejects a response signed by another key (the SP checks the IdP certificate)', async () => {
    const other = await startSimpleSamlIdp({ sp: [{ entityId: spEntityId, acsUrl }], users: [alice] });
    try {
      const saml = new SAML({
        entryPoint: other.ssoUrl,
        issuer: spEntityId,
        callbackUrl: acsUrl,
        idpCert: idp!.certificatePem,
        audience: spEntityId,
        wantAuthnResponseSigned: false,
        wantAssertionsSigned: true,
      });
      const answer = await signInAtSimpleSaml(await saml.getAuthorizeUrlAsync('', undefined, {}), alice.username, alice.password);
      await expect(saml.validatePostResponseAsync({ SAMLResponse: answer.SAMLResponse })).rejects.toThrow(/signature/i);
    } finally {
      await other.stop();
    }
  });

  it('stop() ends php and removes its temporary directory', async () => {
    const before = new Set(harnessDirs());
    const extra = await startSimpleSamlIdp({ sp: [], users: [] });
    const created = harnessDirs().filter((dir) => !before.has(dir));
    expect(created).toHaveLength(1);
    await extra.stop();
    await expect(fetch(extra.entityId)).rejects.toThrow();
    expect(existsSync(path.join(os.tmpdir(), created[0]!))).toBe(false);
    await extra.stop(); // twice is harmless
  });
});
