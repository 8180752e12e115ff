import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type FormError } from '../api';
import { Card, ErrorAlert, Field, formValue, Notice } from '../ui';

/** A second factor the service may ask for at sign-in (docs/mfa.md): the authenticator code or a mailed code. */
export type SecondFactor = 'totp' | 'email';

/** The factors an `mfa_required` refusal offers (`details.methods`, preferred first); none for any other error. */
export function factorsOf(error: FormError | null): SecondFactor[] {
  if (error?.reason !== 'mfa_required') return [];
  const methods = error.details.methods;
  return Array.isArray(methods) ? methods.filter((m): m is SecondFactor => m === 'totp' || m === 'email') : [];
}

/**
 * The second factor of a password sign-in (`mfa_required` with `methods`, docs/mfa.md): the
 * authenticator code or a recovery code for an enrolled user; otherwise the mailed code, and, when
 * `totp` follows `email`, "Set up an authenticator instead" with that code. The sign-in page holds
 * the credentials and the calls; this form reports the codes typed through its callbacks.
 */
export function PasswordSecondFactor({ email, factors, error, enrolError, sendError, emailCodeSent, signingIn, enrolling, sending, onCode, onEnrol, onSendEmailCode, onStartOver }: {
  email: string;
  factors: SecondFactor[];
  /** The sign-in's refusal (other than `mfa_required`), shown beside the code typed. */
  error: FormError | null;
  enrolError: FormError | null;
  sendError: FormError | null;
  emailCodeSent: boolean;
  signingIn: boolean;
  enrolling: boolean;
  sending: boolean;
  onCode: (code: { totpCode: string } | { recoveryCode: string } | { emailOtpCode: string }) => void;
  onEnrol: (emailOtpCode: string) => void;
  onSendEmailCode: () => void;
  onStartOver: () => void;
}) {
  const { t } = useTranslation('auth');
  // methods list what the user can use, preferred first; `totp` after `email` means "may enrol" (docs/mfa.md)
  const enrolled = factors[0] === 'totp';
  const canEnrol = !enrolled && factors.includes('totp');
  const emailError = enrolError ?? error;
  return (
    <Card title={t('factor.title')}>
      <ErrorAlert error={emailError ?? sendError} />
      {enrolled && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            onCode({ totpCode: formValue(new FormData(e.currentTarget), 'totpCode') ?? '' });
          }}
        >
          <Field label={t('factor.totpCode')} name="totpCode" inputMode="numeric" autoComplete="one-time-code" required error={error} />
          <button type="submit" disabled={signingIn}>{t('factor.verify')}</button>
        </form>
      )}
      {enrolled && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            onCode({ recoveryCode: formValue(new FormData(e.currentTarget), 'recoveryCode') ?? '' });
          }}
        >
          <p className="hint">{t('factor.lostApp')}</p>
          <Field label={t('factor.recoveryCode')} name="recoveryCode" autoComplete="off" required error={error} />
          <button type="submit" className="secondary" disabled={signingIn}>{t('factor.useRecoveryCode')}</button>
        </form>
      )}
      {!enrolled && factors.includes('email') && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const code = formValue(new FormData(e.currentTarget), 'emailOtpCode') ?? '';
            const submitter = (e.nativeEvent as SubmitEvent).submitter;
            if (submitter?.getAttribute('value') === 'enrol') onEnrol(code);
            else onCode({ emailOtpCode: code });
          }}
        >
          <button type="button" className="secondary" onClick={() => onSendEmailCode()} disabled={sending}>
            {t('factor.emailMeCode')}
          </button>
          {emailCodeSent && <Notice>{t('factor.codeSent', { email })}</Notice>}
          <Field label={t('factor.emailCode')} name="emailOtpCode" inputMode="numeric" autoComplete="one-time-code" required error={emailError} />
          <button type="submit" value="sign-in" disabled={signingIn || enrolling}>{t('factor.verifyEmailCode')}</button>
          {canEnrol && (
            <>
              <p className="hint">{t('factor.orEnrol')}</p>
              <button type="submit" value="enrol" className="secondary" disabled={signingIn || enrolling}>
                {t('factor.enrolInstead')}
              </button>
            </>
          )}
        </form>
      )}
      <p>
        <button type="button" className="link" onClick={onStartOver}>{t('factor.startOver')}</button>
      </p>
    </Card>
  );
}

/**
 * The second factor of a provider sign-in (`mfa_required` with an `mfaToken`, valid 5 minutes): an
 * authenticator code, or a mailed code sent to the address the person types (auth/request-email-otp
 * answers the same whether or not the account exists).
 */
export function SecondFactorWithToken({ slug, mfaToken, factors, onSignedIn }: {
  slug: string;
  mfaToken: string;
  factors: SecondFactor[];
  onSignedIn: (session: { accessToken: string; accessTokenExpiresIn: number }) => Promise<void>;
}) {
  const { t } = useTranslation('auth');
  const [emailSentTo, setEmailSentTo] = useState<string | null>(null);
  const complete = useMutation({
    mutationFn: (codes: { totpCode?: string; emailOtpCode?: string; recoveryCode?: string }) =>
      trpc.auth.mfaComplete.mutate({ tenantSlug: slug, mfaToken, ...codes }),
    onSuccess: (session) => onSignedIn(session),
  });
  const sendEmailCode = useMutation({
    mutationFn: (email: string) => trpc.auth.requestEmailOtp.mutate({ tenantSlug: slug, email }),
    onSuccess: (_ok, email) => setEmailSentTo(email),
  });
  const error = complete.error ? toFormError(complete.error) : sendEmailCode.error ? toFormError(sendEmailCode.error) : null;
  return (
    <Card title={t('factor.title')}>
      <ErrorAlert error={error} />
      {factors.includes('totp') && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            complete.mutate({ totpCode: formValue(new FormData(e.currentTarget), 'totpCode') ?? '' });
          }}
        >
          <Field label={t('factor.totpCode')} name="totpCode" inputMode="numeric" autoComplete="one-time-code" required error={error} />
          <button type="submit" disabled={complete.isPending}>{t('factor.verify')}</button>
        </form>
      )}
      {factors.includes('totp') && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            complete.mutate({ recoveryCode: formValue(new FormData(e.currentTarget), 'recoveryCode') ?? '' });
          }}
        >
          <p className="hint">{t('factor.lostApp')}</p>
          <Field label={t('factor.recoveryCode')} name="recoveryCode" autoComplete="off" required error={error} />
          <button type="submit" className="secondary" disabled={complete.isPending}>{t('factor.useRecoveryCode')}</button>
        </form>
      )}
      {factors.includes('email') && (
        <>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              sendEmailCode.mutate(formValue(new FormData(e.currentTarget), 'email') ?? '');
            }}
          >
            <Field label={t('factor.yourEmail')} name="email" type="email" autoComplete="username" required error={sendEmailCode.error ? error : null} />
            <button type="submit" className="secondary" disabled={sendEmailCode.isPending}>{t('factor.emailMeCode')}</button>
          </form>
          {emailSentTo && <Notice>{t('factor.codeSentIfAccount', { email: emailSentTo })}</Notice>}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              complete.mutate({ emailOtpCode: formValue(new FormData(e.currentTarget), 'emailOtpCode') ?? '' });
            }}
          >
            <Field label={t('factor.emailCode')} name="emailOtpCode" inputMode="numeric" autoComplete="one-time-code" required error={complete.error ? error : null} />
            <button type="submit" disabled={complete.isPending}>{t('factor.verifyEmailCode')}</button>
          </form>
        </>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('factor.startOver')}</Link>
      </nav>
    </Card>
  );
}
