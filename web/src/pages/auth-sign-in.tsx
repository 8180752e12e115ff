import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { usePageTitle, useSignInOptions, useSlug } from '../hooks';
import { Card, ErrorAlert, Field, formValue, RecoveryCodeList, TotpSecret } from '../ui';
import { useApplicationSignIn, useSignedInNavigation } from './auth-hooks';
import { IdpSignInButton, PasskeySignInButton } from './auth-other-sign-ins';
import { ResendVerification, WorkspaceLine } from './auth-parts';
import { factorsOf, PasswordSecondFactor, type SecondFactor } from './auth-second-factor';

/**
 * `/app/{slug}/sign-in`: email and password, then the second factor when the tenant's policy asks
 * (docs/mfa.md): the authenticator code for an enrolled user (`methods` `["totp"]`); otherwise the
 * mailed code, and under `Required` (`["email","totp"]`, not enrolled) also "Set up an authenticator
 * instead", which enrols with auth.totpInitialEnroll / auth.totpInitialVerify and the same email code.
 */
export function SignInPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('signIn.title'));
  const slug = useSlug();
  const onSignedIn = useSignedInNavigation(slug);
  const applicationName = useApplicationSignIn(slug);
  const options = useSignInOptions(slug);
  const [credentials, setCredentials] = useState<{ email: string; password: string } | null>(null);
  const [factors, setFactors] = useState<SecondFactor[]>([]);
  const [emailCodeSent, setEmailCodeSent] = useState(false);

  const login = useMutation({
    mutationFn: (input: { email: string; password: string; totpCode?: string; emailOtpCode?: string; recoveryCode?: string }) =>
      trpc.auth.login.mutate({ tenantSlug: slug, ...input }),
    onSuccess: (session) => onSignedIn(session),
    onError: (err, input) => {
      const needed = factorsOf(toFormError(err));
      if (needed.length > 0) {
        setCredentials({ email: input.email, password: input.password });
        setFactors(needed);
      }
    },
  });
  const sendEmailCode = useMutation({
    mutationFn: () => trpc.auth.requestEmailOtp.mutate({ tenantSlug: slug, email: credentials!.email, password: credentials!.password }),
    onSuccess: () => setEmailCodeSent(true),
  });
  const enrol = useMutation({
    mutationFn: (emailOtpCode: string) =>
      trpc.auth.totpInitialEnroll.mutate({ tenantSlug: slug, ...credentials!, emailOtpCode }).then((secret) => ({ ...secret, emailOtpCode })),
  });
  const enrolVerify = useMutation({
    mutationFn: (code: string) =>
      trpc.auth.totpInitialVerify.mutate({ tenantSlug: slug, ...credentials!, code, emailOtpCode: enrol.data!.emailOtpCode }),
  });
  // enterprise SSO first (docs/sso.md): an address of a connection's domain goes to its identity provider, no password sent
  const enterpriseSso = useMutation({
    mutationFn: (input: { email: string; password: string }) => trpc.sso.start.mutate({ tenantSlug: slug, email: input.email }),
    onSuccess: ({ redirectUrl }) => window.location.assign(redirectUrl),
    onError: (err, input) => {
      if (toFormError(err).reason === 'sso_connection_not_found') login.mutate(input);
    },
  });
  const ssoError = enterpriseSso.error ? toFormError(enterpriseSso.error) : null;
  const error = login.error ? toFormError(login.error) : ssoError && ssoError.reason !== 'sso_connection_not_found' ? ssoError : null;
  const shownError = error && error.reason !== 'mfa_required' ? error : null;
  const startOver = () => {
    setCredentials(null);
    setEmailCodeSent(false);
    login.reset();
    enrol.reset();
    enrolVerify.reset();
  };

  if (enrolVerify.data) {
    // The factor is on and the session started: the recovery codes are shown once, before going on.
    const session = enrolVerify.data;
    return (
      <Card title={t('signIn.totpOnTitle')}>
        <RecoveryCodeList codes={session.recoveryCodes} workspace={slug} />
        <button type="button" onClick={() => void onSignedIn(session)}>{t('signIn.savedCodesContinue')}</button>
      </Card>
    );
  }

  if (credentials && enrol.data) {
    const enrolError = enrolVerify.error ? toFormError(enrolVerify.error) : null;
    return (
      <Card title={t('signIn.setUpTotpTitle')}>
        <ErrorAlert error={enrolError} />
        <form
          onSubmit={(e) => {
            e.preventDefault();
            enrolVerify.mutate(formValue(new FormData(e.currentTarget), 'code') ?? '');
          }}
        >
          <TotpSecret secret={enrol.data.secret} otpauthUri={enrol.data.otpauthUri} />
          <Field label={t('factor.totpCode')} name="code" inputMode="numeric" autoComplete="one-time-code" required error={enrolError} />
          <button type="submit" disabled={enrolVerify.isPending}>{t('signIn.turnOnAndSignIn')}</button>
        </form>
        <p>
          <button type="button" className="link" onClick={startOver}>{t('factor.startOver')}</button>
        </p>
      </Card>
    );
  }

  if (credentials && factors.length > 0) {
    return (
      // keyed: a new form, so no input keeps what was typed into the sign-in form at the same place
      <PasswordSecondFactor
        key="second-factor"
        email={credentials.email}
        factors={factors}
        error={shownError}
        enrolError={enrol.error ? toFormError(enrol.error) : null}
        sendError={sendEmailCode.error ? toFormError(sendEmailCode.error) : null}
        emailCodeSent={emailCodeSent}
        signingIn={login.isPending}
        enrolling={enrol.isPending}
        sending={sendEmailCode.isPending}
        onCode={(code) => login.mutate({ ...credentials, ...code })}
        onEnrol={(emailOtpCode) => enrol.mutate(emailOtpCode)}
        onSendEmailCode={() => sendEmailCode.mutate()}
        onStartOver={startOver}
      />
    );
  }

  return (
    <Card title={t('signIn.title')}>
      <WorkspaceLine slug={slug} />
      {applicationName && <p><Trans t={t} i18nKey="signIn.continueTo" values={{ app: applicationName }} components={{ strong: <strong /> }} /></p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const input = { email: formValue(form, 'email') ?? '', password: formValue(form, 'password') ?? '' };
          login.reset();
          if (options.data?.enterpriseSso) enterpriseSso.mutate(input);
          else login.mutate(input);
        }}
      >
        <ErrorAlert error={shownError} />
        <Field label={t('fields.email')} name="email" type="email" autoComplete="username" required error={shownError} />
        <Field
          label={t('fields.password')} name="password" type="password" autoComplete="current-password" required={!options.data?.enterpriseSso} error={shownError}
          hint={options.data?.enterpriseSso ? t('signIn.ssoHint') : undefined}
        />
        <button type="submit" disabled={login.isPending || enterpriseSso.isPending || enterpriseSso.isSuccess}>{t('signIn.submit')}</button>
      </form>
      {shownError?.reason === 'email_not_verified' && login.variables && <ResendVerification key={login.variables.email} slug={slug} email={login.variables.email} />}
      <PasskeySignInButton slug={slug} onSignedIn={onSignedIn} />
      <IdpSignInButton slug={slug} />
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/forgot-password" params={{ slug }}>{t('signIn.forgot')}</Link>
        {/* an invite-only workspace takes no sign-ups: no link to a form that could only fail */}
        {options.data && options.data.signupPolicy !== 'InviteOnly' && (
          <Link to="/app/$slug/sign-up" params={{ slug }}>{t('signIn.createAccount')}</Link>
        )}
      </nav>
    </Card>
  );
}
