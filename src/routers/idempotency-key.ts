import { z } from 'zod';
import type { RequestContext } from '../context.js';
import { SESSION_ERRORS } from '../errors/session.js';

/** The `Idempotency-Key` header (IETF httpapi Idempotency-Key draft): 1 to 255 visible ASCII characters. */
export const idempotencyKeyHeader = z.string().regex(/^[\x21-\x7e]{1,255}$/);

/** The request headers of auth/refresh in the OpenAPI document. */
export const refreshRequestHeaders = z.object({
  'Idempotency-Key': idempotencyKeyHeader
    .describe(
      'Optional. One key per logical refresh (e.g. a UUID), sent again on every retry of it: within 60 s of a successful ' +
        'refresh the same key with the same refresh token answers 200 with the same pair again instead of counting as a replay. ' +
        '1 to 255 visible ASCII characters.',
    )
    .optional(),
});

/** The request headers of POST invites in the OpenAPI document (docs/api-rules.md "Users and sign-up"). */
export const inviteRequestHeaders = z.object({
  'Idempotency-Key': idempotencyKeyHeader
    .describe(
      'Optional. One key per logical invitation (e.g. a UUID), sent again on every retry of it: within 24 hours the same ' +
        'caller with the same key and the same body gets the first answer again (the same invite and token; no second invite ' +
        'or mail); the same key with another body answers 409 `idempotency_key_reused`. 1 to 255 visible ASCII characters.',
    )
    .optional(),
});

/** The request headers of POST invites/{id}/resend in the OpenAPI document (docs/api-rules.md "Users and sign-up"). */
export const inviteResendRequestHeaders = z.object({
  'Idempotency-Key': idempotencyKeyHeader
    .describe(
      'Optional. One key per logical resend (e.g. a UUID), sent again on every retry of it: within 24 hours the same ' +
        'caller with the same key and the same invite id gets the first answer again (the same new invite and token; no ' +
        'further invite or mail), although the first resend revoked the invite; the same key used on POST invites or on ' +
        'the resend of another invite answers 409 `idempotency_key_reused`. 1 to 255 visible ASCII characters.',
    )
    .optional(),
});

/**
 * Reads the `Idempotency-Key` header of the request, if any.
 * @returns the key, or undefined when the header is absent.
 * @throws ApiError 400 `invalid_idempotency_key` when it is present but not 1 to 255 visible ASCII characters (or sent twice).
 */
export function readIdempotencyKey(req: RequestContext['req']): string | undefined {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !idempotencyKeyHeader.safeParse(raw).success) throw SESSION_ERRORS.invalidIdempotencyKey();
  return raw;
}
