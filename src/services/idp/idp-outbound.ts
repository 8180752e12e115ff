import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type * as oidc from 'openid-client';
import { isLoopbackHttpUrl } from '../../config.js';
import { assertLiteralHostAllowed, guardedLookup, isLoopbackHost, isPublicAddress } from '../webhooks/webhook-target.js';

/** Largest provider answer read (discovery, JWKS, token, UserInfo), in bytes. */
export const MAX_PROVIDER_RESPONSE_BYTES = 1_048_576;

/** An answer of {@link providerFetch} larger than its limit, cut off when the limit was passed. */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`answer larger than ${maxBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * Why a tenant's issuer identifier (`PUT oauth/idp/credentials` `issuer`) is refused before any
 * request is made, or undefined when it may be tried (docs/idp.md "A provider per tenant"):
 * an absolute `https://` URL without credentials, query or fragment; `http://` only on a loopback
 * host and only when private issuers are allowed (the rule `IDP_ISSUER` follows); unless private
 * issuers are allowed, no loopback, private or link-local IP literal nor `localhost` name (host
 * names are checked again, per resolved address, by {@link providerFetch}).
 * @param allowPrivate `IDP_ALLOW_PRIVATE_ISSUERS`.
 * @returns `{ reason, message }`: `invalid_issuer` (not a usable issuer URL) or `idp_issuer_not_allowed`
 *   (a private target while they are not allowed).
 */
export function issuerProblem(raw: string, allowPrivate: boolean): { reason: 'invalid_issuer' | 'idp_issuer_not_allowed'; message: string } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: 'invalid_issuer', message: 'issuer must be an absolute URL' };
  }
  if (url.username || url.password) return { reason: 'invalid_issuer', message: 'issuer must not carry credentials' };
  if (url.search || url.hash || raw.includes('#') || raw.includes('?')) {
    return { reason: 'invalid_issuer', message: 'issuer must have no query or fragment (OpenID Connect Discovery 1.0 §2)' };
  }
  if (url.pathname.includes('/.well-known/')) {
    return { reason: 'invalid_issuer', message: 'issuer is the provider identifier, not its discovery document URL' };
  }
  if (url.protocol === 'http:') {
    if (!isLoopbackHttpUrl(url)) return { reason: 'invalid_issuer', message: 'issuer must be an https:// URL (http:// only on a loopback host)' };
    return allowPrivate ? undefined : { reason: 'idp_issuer_not_allowed', message: 'an http:// issuer on a loopback host needs IDP_ALLOW_PRIVATE_ISSUERS' };
  }
  if (url.protocol !== 'https:') return { reason: 'invalid_issuer', message: 'issuer must be an https:// URL' };
  if (allowPrivate) return undefined;
  const bare = url.hostname.replace(/^\[|\]$/g, '');
  if (isLoopbackHost(url.hostname) || (isIP(bare) !== 0 && !isPublicAddress(bare))) {
    return { reason: 'idp_issuer_not_allowed', message: 'issuer must not point at a private, loopback or link-local address' };
  }
  return undefined;
}

function bodyOf(body: oidc.CustomFetchOptions['body']): string | Uint8Array | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('streamed request bodies are not sent to identity providers');
}

/**
 * A `fetch` for openid-client (its `customFetch`) that connects only to public addresses (unless
 * `allowPrivate`, for tests of the fetch itself): an IP
 * literal is checked before connecting and a host name in the connection's own DNS look-up, so the
 * address checked is the address used (no DNS-rebinding gap). Used for every request to a tenant's
 * own provider (discovery, token, JWKS, UserInfo) unless `IDP_ALLOW_PRIVATE_ISSUERS` is set; the
 * provider's endpoints may name other hosts than the issuer, and each is checked. Redirects are not
 * followed (openid-client asks for `redirect: 'manual'`); answers above
 * `maxBytes` (default {@link MAX_PROVIDER_RESPONSE_BYTES}) are cut off with
 * {@link ResponseTooLargeError}: at once when `Content-Length` announces more, else at the first
 * chunk that goes over (the connection is closed, nothing more is read).
 * @returns a fetch whose promise rejects with ForbiddenTargetError (from webhook-target) when the
 *   target is not public, ResponseTooLargeError when the answer is larger than `maxBytes`.
 */
export const providerFetch = (allowPrivate: boolean, maxBytes: number = MAX_PROVIDER_RESPONSE_BYTES): oidc.CustomFetch => (url, options) =>
  new Promise<Response>((resolve, reject) => {
    const target = new URL(url);
    assertLiteralHostAllowed(target, allowPrivate);
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(
      target,
      { method: options.method, headers: options.headers, lookup: guardedLookup(allowPrivate), signal: options.signal, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const announced = Number(response.headers['content-length']);
        if (Number.isFinite(announced) && announced > maxBytes) {
          request.destroy(new ResponseTooLargeError(maxBytes));
          return;
        }
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) request.destroy(new ResponseTooLargeError(maxBytes));
          else chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (Array.isArray(value)) for (const item of value) headers.append(name, item);
            else if (value !== undefined) headers.set(name, value);
          }
          const status = response.statusCode ?? 502;
          const empty = status === 204 || status === 205 || status === 304 || chunks.length === 0;
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers }));
        });
      },
    );
    request.on('error', reject);
    request.end(bodyOf(options.body));
  });

/** {@link providerFetch} that refuses every non-public address: used for tenants' own providers. */
export const guardedProviderFetch: oidc.CustomFetch = providerFetch(false);
