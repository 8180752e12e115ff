import { userProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { router } from '../trpc.js';
import { PASSKEY_REASONS } from '../errors/passkey.js';
import { passkeyName, passkeyOutput, registrationOptionsOutput, registrationResponseInput } from './passkey-schemas.js';
import { OK, okOutput, oneTimeCode, recoveryCodesOutput, totpEnrollmentOutput } from './schemas.js';

const tags = ['mfa'];

/** Factor enrolment of the signed-in user: TOTP (docs/mfa.md) and passkeys (docs/passkeys.md); user tokens only. */
export const mfaRouter = router({
  totpEnroll: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/totp/enroll', tags, protect: true,
        summary: 'Start TOTP enrollment: a new secret and its otpauth URI (active after mfa/totp/verify)',
        description:
          'Needs a recent sign-in: the session was authenticated (password, provider or factor) less than 10 minutes ago; ' +
          'refreshing does not renew that. Otherwise 401 `reauthentication_required`: sign in again.',
        errorResponses: { 401: 'Not signed in, or `reauthentication_required`', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant', 409: 'TOTP already enrolled' },
      },
      errorReasons: { 401: ['reauthentication_required'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled'] },
    })
    .output(totpEnrollmentOutput)
    .mutation(({ ctx }) => ctx.services.mfaEnrollment.start(ctx.em, ctx.tenant, ctx.principal)),

  totpVerify: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/totp/verify', tags, protect: true,
        summary: 'Activate the pending TOTP secret with a code from the authenticator app',
        description:
          'Needs a recent sign-in like mfa/totp/enroll (else 401 `reauthentication_required`). The user is mailed a notice of the new factor. ' +
          'The answer carries the ten recovery codes of the factor (`recoveryCodes`), shown only here (docs/mfa.md "Recovery codes").',
        errorResponses: {
          400: 'Invalid body', 401: 'Not signed in, wrong code, or `reauthentication_required`', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant',
          409: 'TOTP already enrolled, or enrollment not started',
        },
      },
      errorReasons: { 401: ['reauthentication_required', 'invalid_mfa_code'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled', 'totp_enrollment_not_started', 'totp_enrollment_changed'] },
    })
    .input(z.object({ code: oneTimeCode }))
    .output(okOutput.extend({ recoveryCodes: recoveryCodesOutput }))
    .mutation(async ({ ctx, input }) => {
      const recoveryCodes = await ctx.services.mfaEnrollment.confirm(ctx.scope, ctx.principal, input.code);
      return { ok: true as const, recoveryCodes };
    }),

  totpDisable: userProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/mfa/totp', tags, protect: true,
        summary: 'Turn off the signed-in user\'s authenticator app (TOTP): the secret and its recovery codes go; idempotent',
        description:
          'Needs a recent sign-in like mfa/totp/enroll (else 401 `reauthentication_required`). The user is mailed a notice when a ' +
          'factor was active. Under mfaPolicy `Required` later sign-ins ask for the email code instead (docs/mfa.md).',
        errorResponses: { 401: 'Not signed in, or `reauthentication_required`', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 401: ['reauthentication_required'] },
    })
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      await ctx.services.mfaEnrollment.disable(ctx.scope, ctx.principal);
      return OK;
    }),

  passkeyRegistrationOptions: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/passkeys/registration-options', tags, protect: true,
        summary: 'Start registering a passkey: WebAuthn creation options for navigator.credentials.create()',
        description:
          'Answers `PublicKeyCredentialCreationOptionsJSON` (discoverable credential and user verification required; the user\'s ' +
          'passkeys in `excludeCredentials`). The challenge is single-use and valid 5 minutes; a new call replaces it. ' +
          'Needs a recent sign-in like mfa/totp/enroll (else 401 `reauthentication_required`).',
        errorResponses: { 401: 'Not signed in, or `reauthentication_required`', 404: 'Unknown tenant' },
      },
      errorReasons: { 401: ['reauthentication_required'] },
    })
    .output(registrationOptionsOutput)
    .mutation(({ ctx }) => ctx.services.passkeys.registrationOptions(ctx.em, ctx.tenant, ctx.principal)),

  passkeyRegistrationVerify: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/passkeys/registration-verify', tags, protect: true,
        summary: 'Finish registering a passkey with the authenticator\'s response',
        description:
          '`response` is the `RegistrationResponseJSON` of the credential (as @simplewebauthn/browser\'s startRegistration answers it). ' +
          'Origin and RP id must be those of `PUBLIC_URL`; the challenge of registration-options is spent whatever the outcome. ' +
          'Needs a recent sign-in (else 401 `reauthentication_required`). The user is mailed a notice of the new passkey.',
        errorResponses: {
          400: 'Invalid body, no open challenge, or the response does not verify', 401: 'Not signed in, or `reauthentication_required`',
          404: 'Unknown tenant', 409: 'The passkey is already registered',
        },
      },
      errorReasons: { 400: [PASSKEY_REASONS.challengeInvalid, PASSKEY_REASONS.invalid], 401: ['reauthentication_required'], 409: [PASSKEY_REASONS.alreadyRegistered] },
    })
    .input(z.object({ response: registrationResponseInput, name: passkeyName.optional() }))
    .output(z.object({ passkey: passkeyOutput }))
    .mutation(async ({ ctx, input }) => {
      const passkey = await ctx.services.passkeys.register(ctx.scope, ctx.principal, input.response, input.name);
      return { passkey };
    }),

  recoveryCodes: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/recovery-codes', tags, protect: true,
        summary: 'Replace the TOTP recovery codes with a new set of ten; the old codes stop working',
        description:
          'Needs a recent sign-in like mfa/totp/enroll (else 401 `reauthentication_required`) and an active TOTP factor ' +
          '(else 409 `totp_not_enrolled`). The codes are shown only in this answer; the user is mailed a notice.',
        errorResponses: { 401: 'Not signed in, or `reauthentication_required`', 404: 'Unknown tenant', 409: 'TOTP not enrolled', 429: 'Rate limited' },
      },
      errorReasons: { 401: ['reauthentication_required'], 409: ['totp_not_enrolled'] },
    })
    .output(z.object({ recoveryCodes: recoveryCodesOutput }))
    .mutation(async ({ ctx }) => ({
      recoveryCodes: await ctx.services.mfaEnrollment.regenerateRecoveryCodes(ctx.scope, ctx.principal),
    })),
});
