import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';

/**
 * A test identity provider that writes SAML 2.0 responses by hand and signs them with xml-crypto, so
 * that tests can send the service provider what no honest IdP would: tampered, wrapped, expired,
 * unsolicited or replayed answers (docs/sso.md "Security checks"). The signature is xml-crypto's;
 * only the document around it is a template.
 */
export interface ForgingIdp {
  entityId: string;
  ssoUrl: string;
  certificatePem: string;
  privateKeyPem: string;
}

/** A fresh RSA-2048 key and self-signed certificate (openssl), for an IdP of entity id `entityId`. */
export function forgingIdp(entityId = `https://idp-${randomBytes(4).toString('hex')}.example.test/saml`): ForgingIdp {
  const dir = mkdtempSync(path.join(tmpdir(), 'saml-forge-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=forging-idp',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return {
      entityId, ssoUrl: 'https://idp.example.test/sso',
      certificatePem: readFileSync(path.join(dir, 'cert.pem'), 'utf8'), privateKeyPem: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The `ID` of the AuthnRequest in an HTTP-Redirect URL (`SAMLRequest`: deflate, base64). */
export function authnRequestIdOf(redirectUrl: string): string {
  const request = new URL(redirectUrl).searchParams.get('SAMLRequest') ?? '';
  const xml = inflateRawSync(Buffer.from(request, 'base64')).toString('utf8');
  const id = /\sID="([^"]+)"/.exec(xml)?.[1];
  if (!id) throw new Error(`no ID in ${xml}`);
  return id;
}

export interface ResponseFields {
  inResponseTo?: string | undefined;
  destination: string;
  recipient?: string;
  audience: string;
  nameId: string;
  issuer?: string;
  assertionId?: string;
  /** Milliseconds from now: the end of the assertion's validity (default 5 minutes). */
  validForMs?: number;
  email?: string;
}

function isoIn(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

/** An unsigned SAML Response XML with one Assertion, filled from `fields`. */
export function responseXml(idp: ForgingIdp, fields: ResponseFields): string {
  const issuer = fields.issuer ?? idp.entityId;
  const inResponseTo = fields.inResponseTo === undefined ? '' : ` InResponseTo="${fields.inResponseTo}"`;
  const notOnOrAfter = isoIn(fields.validForMs ?? 300_000);
  const assertionId = fields.assertionId ?? `_a${randomBytes(12).toString('hex')}`;
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomBytes(12).toString('hex')}" Version="2.0" IssueInstant="${isoIn(0)}" Destination="${fields.destination}"${inResponseTo}>`
    + `<saml:Issuer>${issuer}</saml:Issuer>`
    + '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>'
    + `<saml:Assertion ID="${assertionId}" Version="2.0" IssueInstant="${isoIn(0)}">`
    + `<saml:Issuer>${issuer}</saml:Issuer>`
    + `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${fields.nameId}</saml:NameID>`
    + `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${fields.recipient ?? fields.destination}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>`
    + `<saml:Conditions NotBefore="${isoIn(-60_000)}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${fields.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`
    + `<saml:AuthnStatement AuthnInstant="${isoIn(0)}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
    + (fields.email ? `<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${fields.email}</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>` : '')
    + '</saml:Assertion></samlp:Response>';
}

/** Signs the (first) Assertion of `xml` with the IdP's key (enveloped, exclusive C14N, RSA-SHA256). */
export function signAssertion(idp: Pick<ForgingIdp, 'privateKeyPem' | 'certificatePem'>, xml: string): string {
  const signature = new SignedXml({
    privateKey: idp.privateKeyPem,
    publicCert: idp.certificatePem,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signature.addReference({
    xpath: "//*[local-name(.)='Assertion']",
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signature.computeSignature(xml, { location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
  return signature.getSignedXml();
}

/** Base64 of an XML string, as the HTTP-POST binding carries it. */
export function base64(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}
