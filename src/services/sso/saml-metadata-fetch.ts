import { isLoopbackHttpUrl } from '../../config.js';
import { providerFetch } from '../idp/idp-outbound.js';
import { MAX_SAML_XML_BYTES } from './saml-xml.js';
import { SSO_ERRORS } from '../../errors/sso.js';

/** Milliseconds a metadata download may take. */
const METADATA_TIMEOUT_MS = 10_000;

/**
 * Downloads an identity provider's SAML metadata from `url` (docs/sso.md "Connections"), through the
 * same outbound guard as a tenant's OpenID provider (docs/idp.md): `https://` only (`http://` on a
 * loopback host with `IDP_ALLOW_PRIVATE_ISSUERS`), no credentials in the URL, only public addresses
 * unless private targets are allowed (checked per resolved address), no redirect followed, at most
 * 256 KiB, 10 seconds.
 * @param allowPrivate `IDP_ALLOW_PRIVATE_ISSUERS`.
 * @returns the metadata XML.
 * @throws ApiError 400 `invalid_saml_metadata` (the URL is refused, the download fails or is not 200).
 */
export async function fetchIdentityProviderMetadata(url: string, allowPrivate: boolean): Promise<string> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw SSO_ERRORS.invalidMetadata({ problem: 'metadataUrl is not an absolute URL' });
  }
  if (target.username || target.password) throw SSO_ERRORS.invalidMetadata({ problem: 'metadataUrl must not carry credentials' });
  const allowedScheme = target.protocol === 'https:' || (target.protocol === 'http:' && allowPrivate && isLoopbackHttpUrl(target));
  if (!allowedScheme) throw SSO_ERRORS.invalidMetadata({ problem: 'metadataUrl must be an https:// URL' });
  let response: Response;
  try {
    response = await providerFetch(allowPrivate)(target.href, {
      method: 'GET', headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' }, redirect: 'manual', body: undefined,
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
    });
  } catch (err) {
    const problem = err instanceof Error && err.name === 'ForbiddenTargetError' ? 'metadataUrl points at a private address' : 'the metadata could not be downloaded';
    throw SSO_ERRORS.invalidMetadata({ problem });
  }
  if (response.status !== 200) throw SSO_ERRORS.invalidMetadata({ problem: `the metadata URL answered ${response.status}` });
  const xml = await response.text();
  if (Buffer.byteLength(xml) > MAX_SAML_XML_BYTES) throw SSO_ERRORS.invalidMetadata({ problem: `larger than ${MAX_SAML_XML_BYTES} bytes` });
  return xml;
}
