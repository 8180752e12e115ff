import { X509Certificate } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import * as xpath from 'xpath';
import { SSO_ERRORS } from '../../errors/sso.js';

/**
 * Reading SAML 2.0 XML that an Admin or an identity provider hands in (docs/sso.md "Security checks"):
 * metadata (SAML 2.0 Metadata §2.4.3 IDPSSODescriptor) and certificates. Signatures are never checked
 * here: @node-saml/node-saml (xml-crypto) verifies responses.
 */

/** The largest metadata document or SAML response read, in bytes. */
export const MAX_SAML_XML_BYTES = 256 * 1024;

const HTTP_REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/**
 * True when the document declares a DTD or an entity. Such documents are refused before any parser
 * reads them (XML external entities and entity expansion, OWASP XXE Prevention): SAML never needs one.
 */
export function declaresDoctype(xml: string): boolean {
  return /<!DOCTYPE|<!ENTITY/i.test(xml);
}

/** What the Admin needs from an identity provider: its entity id, sign-in URL and signing certificates. */
export interface IdentityProviderSettings {
  entityId: string;
  ssoUrl: string;
  certificates: string[];
}

/**
 * Reads an identity provider's metadata: `EntityDescriptor/@entityID`, the HTTP-Redirect
 * `SingleSignOnService/@Location` of its IDPSSODescriptor, and the X.509 certificates of its
 * `KeyDescriptor`s for signing (`use="signing"` or no `use`).
 * @throws ApiError 400 `invalid_saml_metadata` (too large, a DTD, not XML, no IDP descriptor, no
 *   HTTP-Redirect endpoint, no signing certificate), 400 `invalid_saml_certificate`.
 */
export function parseIdentityProviderMetadata(xml: string): IdentityProviderSettings {
  if (Buffer.byteLength(xml) > MAX_SAML_XML_BYTES) throw SSO_ERRORS.invalidMetadata({ problem: `larger than ${MAX_SAML_XML_BYTES} bytes` });
  if (declaresDoctype(xml)) throw SSO_ERRORS.invalidMetadata({ problem: 'it declares a DTD or an entity' });
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: { warning: () => undefined, error: (message: string) => problems.push(message), fatalError: (message: string) => problems.push(message) },
  }).parseFromString(xml, 'text/xml');
  if (problems.length > 0 || !doc.documentElement) throw SSO_ERRORS.invalidMetadata({ problem: 'it is not well-formed XML' });
  const select = (expression: string, node: Node = doc as unknown as Node): Node[] => xpath.select(expression, node) as Node[];
  const descriptor = select("//*[local-name()='EntityDescriptor'][*[local-name()='IDPSSODescriptor']]")[0] as Element | undefined;
  if (!descriptor) throw SSO_ERRORS.invalidMetadata({ problem: 'it has no EntityDescriptor with an IDPSSODescriptor' });
  const entityId = descriptor.getAttribute('entityID')?.trim();
  if (!entityId) throw SSO_ERRORS.invalidMetadata({ problem: 'the EntityDescriptor has no entityID' });
  const idp = select("*[local-name()='IDPSSODescriptor']", descriptor)[0] as Element;
  const service = (select("*[local-name()='SingleSignOnService']", idp) as Element[]).find((node) => node.getAttribute('Binding') === HTTP_REDIRECT_BINDING);
  const ssoUrl = service?.getAttribute('Location')?.trim();
  if (!ssoUrl) throw SSO_ERRORS.invalidMetadata({ problem: 'the IDPSSODescriptor has no SingleSignOnService for the HTTP-Redirect binding' });
  const certificates = (select("*[local-name()='KeyDescriptor']", idp) as Element[])
    .filter((key) => !key.getAttribute('use') || key.getAttribute('use') === 'signing')
    .flatMap((key) => select(".//*[local-name()='X509Certificate']", key).map((node) => node.textContent ?? ''));
  if (certificates.length === 0) throw SSO_ERRORS.invalidMetadata({ problem: 'the IDPSSODescriptor has no signing certificate' });
  return { entityId, ssoUrl, certificates: [...new Set(certificates.map(normalizeCertificate))] };
}

/**
 * An X.509 certificate, given as PEM or as the base64 DER of metadata's `X509Certificate`, as PEM.
 * @throws ApiError 400 `invalid_saml_certificate` when it does not parse as a certificate.
 */
export function normalizeCertificate(text: string): string {
  const body = text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw SSO_ERRORS.invalidCertificate();
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
  } catch {
    throw SSO_ERRORS.invalidCertificate();
  }
  return pem;
}

function parse(xml: string): Node {
  return new DOMParser({ errorHandler: { warning: () => undefined, error: () => undefined, fatalError: () => undefined } }).parseFromString(xml, 'text/xml') as unknown as Node;
}

/** The first value of an attribute selected by `expression` (namespace-agnostic XPath) in `xml`, or undefined. */
export function selectAttribute(xml: string, expression: string): string | undefined {
  return (xpath.select(expression, parse(xml)) as Attr[])[0]?.value;
}

/** The trimmed text of the first element selected by `expression` in `xml`, or undefined. */
export function selectText(xml: string, expression: string): string | undefined {
  return (xpath.select(expression, parse(xml)) as Node[])[0]?.textContent?.trim() || undefined;
}
