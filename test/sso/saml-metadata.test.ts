import { describe, expect, it } from 'vitest';
import { fetchIdentityProviderMetadata } from '../../src/services/sso/saml-metadata-fetch.js';
import { normalizeCertificate, parseIdentityProviderMetadata } from '../../src/services/sso/saml-xml.js';
import { forgingIdp } from '../helpers/saml-forge.js';

/** Reading an identity provider's SAML metadata (docs/sso.md "Connections"), below HTTP. */
describe('SAML metadata', () => {
  const idp = forgingIdp();
  const body = idp.certificatePem.replace(/-----[^-]+-----|\s/g, '');
  const metadata = (descriptor: string) => `<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${idp.entityId}">${descriptor}</md:EntityDescriptor>`;
  const signingKey = `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
  const redirect = `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.test/post"/><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.test/redirect"/>`;

  it('reads the entity id, the HTTP-Redirect sign-in URL and the signing certificates (encryption keys left out)', () => {
    const encryption = `<md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${forgingIdp().certificatePem.replace(/-----[^-]+-----|\s/g, '')}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
    const read = parseIdentityProviderMetadata(metadata(`<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${signingKey}${encryption}${redirect}</md:IDPSSODescriptor>`));
    expect(read).toEqual({ entityId: idp.entityId, ssoUrl: 'https://idp.example.test/redirect', certificates: [normalizeCertificate(idp.certificatePem)] });
  });

  it.each([
    ['a DTD', `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${metadata('')}`, /DTD/],
    ['no IDP descriptor', metadata('<md:SPSSODescriptor/>'), /IDPSSODescriptor/],
    ['no HTTP-Redirect endpoint', metadata(`<md:IDPSSODescriptor>${signingKey}</md:IDPSSODescriptor>`), /HTTP-Redirect/],
    ['no signing certificate', metadata(`<md:IDPSSODescriptor>${redirect}</md:IDPSSODescriptor>`), /certificate/],
    ['not XML', 'this is not xml <', /well-formed|IDPSSODescriptor/],
  ])('refuses metadata with %s', (_name, xml, problem) => {
    expect(() => parseIdentityProviderMetadata(xml)).toThrow(problem);
  });

  it('refuses a certificate that is not one', () => {
    expect(() => normalizeCertificate('-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----')).toThrow(/X\.509/);
  });

  it('downloads metadata only from https and public addresses unless private targets are allowed', async () => {
    await expect(fetchIdentityProviderMetadata('http://idp.example.test/metadata', false)).rejects.toThrow(/https/);
    await expect(fetchIdentityProviderMetadata('https://user:pw@idp.example.test/metadata', false)).rejects.toThrow(/credentials/);
    await expect(fetchIdentityProviderMetadata('https://127.0.0.1:9/metadata', false)).rejects.toThrow(/private address/);
    await expect(fetchIdentityProviderMetadata('https://10.0.0.1/metadata', false)).rejects.toThrow(/private address/);
  });
});
