import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Host names that always mean this machine, whatever DNS says. */
const LOCAL_HOST_NAMES = /^(localhost|localhost\.localdomain|.*\.localhost)$/i;

/**
 * Whether `address` (IPv4 or IPv6 text) is a public unicast address: not loopback, private
 * (RFC 1918, RFC 4193), link-local (cloud metadata 169.254.169.254), carrier-grade NAT, multicast,
 * reserved or unspecified. IPv4-mapped IPv6 addresses are judged as the IPv4 they carry (OWASP SSRF
 * Prevention Cheat Sheet).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** True for `localhost`-like names and loopback IP literals (`127.0.0.0/8`, `::1`), brackets allowed. */
export function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (LOCAL_HOST_NAMES.test(bare)) return true;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}

/**
 * Checks a webhook URL as given by an admin (docs/events.md "Webhooks"): `https://`, or `http://`
 * on a loopback host when private targets are allowed; no credentials in the URL; an IP-literal or
 * `localhost` host must be public unless private targets are allowed. Host names are resolved at
 * delivery (see {@link guardedLookup}), where every resolved address is checked again.
 * @returns the reason the URL is refused, or undefined when it is acceptable.
 */
export function webhookUrlProblem(raw: string, allowPrivateTargets: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.username || url.password) return 'url must not carry credentials';
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback && allowPrivateTargets)) {
    return 'url must be https:// (http:// only on a loopback host in development)';
  }
  if (allowPrivateTargets) return undefined;
  const bare = url.hostname.replace(/^\[|\]$/g, '');
  if (loopback || (isIP(bare) !== 0 && !isPublicAddress(bare))) return 'url must not point at a private, loopback or link-local address';
  return undefined;
}

/** Raised when a webhook target resolves to an address it may not use. */
export class ForbiddenTargetError extends Error {
  override name = 'ForbiddenTargetError';
}

/** The one refusal for a host name that resolves to a non-public address or does not resolve at all. */
export function unusableHostMessage(hostname: string): string {
  return `target ${hostname} does not resolve to a public address`;
}

/**
 * A `lookup` for node:http(s) requests that refuses non-public addresses (unless allowed), so the
 * address checked is the address connected to (no DNS-rebinding gap between check and connect).
 * A name that does not resolve gets the same ForbiddenTargetError as one resolving to a private
 * address, with the same message and no resolver detail, so an Admin cannot use the answers (or the
 * stored delivery errors) as an oracle of the internal DNS.
 */
export function guardedLookup(allowPrivateTargets: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      const refused = err ? undefined : addresses.find((a) => !allowPrivateTargets && !isPublicAddress(a.address));
      if (err || refused || addresses.length === 0) {
        return callback(new ForbiddenTargetError(unusableHostMessage(hostname)), '', 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Checks an IP-literal host before connecting (node:net skips `lookup` for literals).
 * @throws ForbiddenTargetError for a non-public literal when private targets are not allowed.
 */
export function assertLiteralHostAllowed(url: URL, allowPrivateTargets: boolean): void {
  const bare = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivateTargets && isIP(bare) !== 0 && !isPublicAddress(bare)) {
    throw new ForbiddenTargetError('target is a non-public address');
  }
}
