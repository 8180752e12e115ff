import { webcrypto } from 'node:crypto';

/** Years an SP certificate is valid: SAML peers pin it from metadata, so it should outlive the connection. */
const SP_CERTIFICATE_YEARS = 10;

/** A SAML service provider's key pair: the private key (PKCS #8 PEM) and its self-signed certificate (PEM). */
export interface ServiceProviderKey {
  privateKeyPem: string;
  certificatePem: string;
}

/**
 * A new RSA-2048 key pair and a self-signed X.509 certificate (SHA-256, valid
 * {@link SP_CERTIFICATE_YEARS} years) for one SAML connection's service provider (docs/sso.md
 * "Signed requests and encrypted assertions"): the certificate goes into the SP metadata for the
 * identity provider to verify signed AuthnRequests and to encrypt assertions; the private key signs
 * and decrypts. Generated with Node's WebCrypto and @peculiar/x509 (loaded here, on the first
 * connection created: docs/performance.md "What is left").
 * @param subject the certificate's common name (the SP entity id's host and connection id).
 */
export async function generateServiceProviderKey(subject: string): Promise<ServiceProviderKey> {
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + SP_CERTIFICATE_YEARS);
  const { X509CertificateGenerator } = await import('@peculiar/x509');
  const certificate = await X509CertificateGenerator.createSelfSigned(
    { name: `CN=${subject.replace(/[,+="<>#;\\]/g, ' ').slice(0, 64)}`, keys, notBefore, notAfter, signingAlgorithm: algorithm },
    webcrypto as unknown as Crypto,
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const privateKeyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END PRIVATE KEY-----\n`;
  return { privateKeyPem, certificatePem: certificate.toString('pem') };
}
