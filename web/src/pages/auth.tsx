import { startAuthentication } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { currentAccessToken, PasskeyPromptError, reasonAsFormError, rememberSession, restoreSession, toFormError, toPasskeyError, trpc, type FormError } from '../api';
import { applyApplicationLanguage } from '../language';
import { continueToApplication, hasInteraction, interactionInfo, rememberInteraction, takeInteraction } from '../oidc-interaction';
import { forgetPersonData, useLinkToken, usePageTitle, useSignedIn, useSignInOptions, useSlug } from '../hooks';
import { Card, ErrorAlert, Field, formValue, Notice, RecoveryCodeList, TotpSecret } from '../ui';

type SecondFactor = 'totp' | 'email';

function factorsOf(error: FormError | null): SecondFactor[] {
  if (error?.reason !== 'mfa_required') return [];
  const methods = error.details.methods;
  return Array.isArray(methods) ? methods.filter((m): m is SecondFactor => m === 'totp' || m === 'email') : [];
}

/**
 * After a session is issued: keep the access token, then go back to the application that asked for
 * the sign-in (OpenID Provider interaction; through the organization picker when the person has
 * several organizations to choose from), or else open the account page.
 */
function useSignedInNavigation(slug: string) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  return async (session: { accessToken: string; accessTokenExpiresIn: number }, tenantSlug = slug) => {
    rememberSession(tenantSlug, session);
    forgetPersonData(queryClient, tenantSlug);
    queryClient.setQueryData(['session', tenantSlug], true);
    if (hasPendingInvite(tenantSlug)) {
      // an invite link waits: back to it, where the person accepts as themselves
      await navigate({ to: '/app/$slug/accept-invite', params: { slug: tenantSlug } });
      return;
    }
    const uid = takeInteraction(tenantSlug);
    if (uid) {
      const next = await continueToApplication(tenantSlug, uid, session.accessToken);
      if ('redirectTo' in next) {
        window.location.assign(next.redirectTo);
        return;
      }
      if ('pick' in next) {
        await navigate({ to: '/app/$slug/choose-organization', params: { slug: tenantSlug }, search: { interaction: uid } });
        return;
      }
    }
    await navigate({ to: '/app/$slug/account', params: { slug: tenantSlug } });
  };
}

/**
 * An application's sign-in request (`?interaction=`): remembered for after the sign-in, and finished
 * at once with the session the browser already holds unless the application asked for a new sign-in.
 * @returns the application's name to show, once known.
 */
function useApplicationSignIn(slug: string): string | undefined {
  const { interaction } = useSearch({ strict: false }) as { interaction?: string };
  const navigate = useNavigate();
  const [clientName, setClientName] = useState<string>();
  useEffect(() => {
    if (!interaction) return;
    rememberInteraction(slug, interaction);
    let cancelled = false;
    void (async () => {
      const info = await interactionInfo(slug, interaction);
      if (cancelled || !info) return;
      setClientName(info.clientName);
      applyApplicationLanguage(info.uiLocale);
      if (info.freshSignInRequired || !(await restoreSession(slug))) return;
      const token = currentAccessToken(slug);
      if (!token || cancelled) return;
      const uid = takeInteraction(slug) ?? interaction;
      const next = await continueToApplication(slug, uid, token, info);
      if ('redirectTo' in next) window.location.assign(next.redirectTo);
      else if ('pick' in next) await navigate({ to: '/app/$slug/choose-organization', params: { slug }, search: { interaction: uid } });
      else rememberInteraction(slug, interaction);
    })();
    return () => {
      cancelled = true;
    };
  }, [slug, interaction, navigate]);
  return clientName;
}

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
    // methods list what the user can use, preferred first; `totp` after `email` means "may enrol" (docs/mfa.md)
    const enrolled = factors[0] === 'totp';
    const canEnrol = !enrolled && factors.includes('totp');
    const emailError = enrol.error ? toFormError(enrol.error) : shownError;
    return (
      // keyed: a new form, so no input keeps what was typed into the sign-in form at the same place
      <Card key="second-factor" title={t('factor.title')}>
        <ErrorAlert error={emailError ?? (sendEmailCode.error ? toFormError(sendEmailCode.error) : null)} />
        {enrolled && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              login.mutate({ ...credentials, totpCode: formValue(new FormData(e.currentTarget), 'totpCode') ?? '' });
            }}
          >
            <Field label={t('factor.totpCode')} name="totpCode" inputMode="numeric" autoComplete="one-time-code" required error={shownError} />
            <button type="submit" disabled={login.isPending}>{t('factor.verify')}</button>
          </form>
        )}
        {enrolled && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              login.mutate({ ...credentials, recoveryCode: formValue(new FormData(e.currentTarget), 'recoveryCode') ?? '' });
            }}
          >
            <p className="hint">{t('factor.lostApp')}</p>
            <Field label={t('factor.recoveryCode')} name="recoveryCode" autoComplete="off" required error={shownError} />
            <button type="submit" className="secondary" disabled={login.isPending}>{t('factor.useRecoveryCode')}</button>
          </form>
        )}
        {!enrolled && factors.includes('email') && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const code = formValue(new FormData(e.currentTarget), 'emailOtpCode') ?? '';
              const submitter = (e.nativeEvent as SubmitEvent).submitter;
              if (submitter?.getAttribute('value') === 'enrol') enrol.mutate(code);
              else login.mutate({ ...credentials, emailOtpCode: code });
            }}
          >
            <button type="button" className="secondary" onClick={() => sendEmailCode.mutate()} disabled={sendEmailCode.isPending}>
              {t('factor.emailMeCode')}
            </button>
            {emailCodeSent && <Notice>{t('factor.codeSent', { email: credentials.email })}</Notice>}
            <Field label={t('factor.emailCode')} name="emailOtpCode" inputMode="numeric" autoComplete="one-time-code" required error={emailError} />
            <button type="submit" value="sign-in" disabled={login.isPending || enrol.isPending}>{t('factor.verifyEmailCode')}</button>
            {canEnrol && (
              <>
                <p className="hint">{t('factor.orEnrol')}</p>
                <button type="submit" value="enrol" className="secondary" disabled={login.isPending || enrol.isPending}>
                  {t('factor.enrolInstead')}
                </button>
              </>
            )}
          </form>
        )}
        <p>
          <button type="button" className="link" onClick={startOver}>{t('factor.startOver')}</button>
        </p>
      </Card>
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

/**
 * "Resend link": mails a new verification link (auth/request-email-verification, which answers the
 * same whether or not the account exists). On the sign-in page after `email_not_verified`, and on the
 * account page of a user whose address is not verified.
 */
export function ResendVerification({ slug, email }: { slug: string; email: string }) {
  const { t } = useTranslation('auth');
  const resend = useMutation({ mutationFn: () => trpc.auth.requestEmailVerification.mutate({ tenantSlug: slug, email }) });
  return (
    <div className="resend-verification">
      <ErrorAlert error={resend.error ? toFormError(resend.error) : null} />
      {resend.isSuccess ? (
        <Notice>{t('resend.sent', { email })}</Notice>
      ) : (
        <button type="button" className="secondary" onClick={() => resend.mutate()} disabled={resend.isPending}>{t('resend.button')}</button>
      )}
    </div>
  );
}

/** "Use a passkey" on the sign-in page: a discoverable-credential ceremony, no email typed (docs/passkeys.md). */
function PasskeySignInButton({ slug, onSignedIn }: { slug: string; onSignedIn: ReturnType<typeof useSignedInNavigation> }) {
  const { t } = useTranslation('auth');
  const signIn = useMutation({
    mutationFn: async () => {
      const { challengeId, options } = await trpc.auth.passkeyOptions.mutate({ tenantSlug: slug });
      const response = await startAuthentication({ optionsJSON: options }).catch((err: unknown) => {
        throw new PasskeyPromptError(err, options.rpId);
      });
      return trpc.auth.passkeyVerify.mutate({ tenantSlug: slug, challengeId, response });
    },
    onSuccess: (session) => onSignedIn(session),
  });
  return (
    <div className="passkey-sign-in">
      <ErrorAlert error={signIn.error ? toPasskeyError(signIn.error) : null} />
      <button type="button" className="secondary" onClick={() => signIn.mutate()} disabled={signIn.isPending}>{t('signIn.usePasskey')}</button>
    </div>
  );
}

/**
 * `/app/{slug}/sign-up`: a Member account with email and password, as the workspace's settings allow
 * (`sign-in-options`): no form under `InviteOnly`, the allowed domains named under `Domains`, the
 * workspace's minimum password length in the hint.
 */
export function SignUpPage() {
  const { t, i18n } = useTranslation('auth');
  usePageTitle(t('signUp.title'));
  const slug = useSlug();
  const options = useSignInOptions(slug);
  const onSignedIn = useSignedInNavigation(slug);
  const [pendingEmail, setPendingEmail] = useState<string | null>(null);
  const signup = useMutation({
    mutationFn: (form: FormData) =>
      trpc.auth.signup.mutate({ tenantSlug: slug, email: formValue(form, 'email') ?? '', password: formValue(form, 'password') ?? '' }),
    onSuccess: async (session) => {
      if (session.user.status === 'Pending') setPendingEmail(session.user.email);
      else await onSignedIn(session);
    },
  });
  const error = signup.error ? toFormError(signup.error) : null;
  if (pendingEmail) {
    return (
      <Card title={t('signUp.checkEmail')}>
        <Notice>{t('signUp.verificationSent', { email: pendingEmail })}</Notice>
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
      </Card>
    );
  }
  if (options.data?.signupPolicy === 'InviteOnly') {
    return (
      <Card title={t('signUp.title')}>
        <WorkspaceLine slug={slug} />
        <p>{t('signUp.inviteOnly')}</p>
        <nav aria-label={t('nav.accountHelp')} className="links">
          <Link to="/app/$slug/sign-in" params={{ slug }}>{t('signUp.haveAccount')}</Link>
        </nav>
      </Card>
    );
  }
  const domains = options.data?.signupPolicy === 'Domains' ? options.data.signupEmailDomains : [];
  return (
    <Card title={t('signUp.title')}>
      <WorkspaceLine slug={slug} />
      {domains.length > 0 && <p>{t('signUp.domains', { domains: new Intl.ListFormat(i18n.language, { type: 'disjunction' }).format(domains) })}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          signup.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        <Field label={t('fields.email')} name="email" type="email" autoComplete="username" required error={error} />
        <Field
          label={t('fields.password')} name="password" type="password" autoComplete="new-password" required error={error}
          hint={t('fields.passwordHintMin', { min: options.data?.passwordMinLength ?? 12 })}
        />
        <button type="submit" disabled={signup.isPending}>{t('signUp.submit')}</button>
      </form>
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('signUp.haveAccount')}</Link>
      </nav>
    </Card>
  );
}

/** `/app/{slug}/forgot-password`: asks for a reset link (the answer never says whether the account exists). */
export function ForgotPasswordPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('forgot.pageTitle'));
  const slug = useSlug();
  const request = useMutation({
    mutationFn: (form: FormData) => trpc.auth.requestPasswordReset.mutate({ tenantSlug: slug, email: formValue(form, 'email') ?? '' }),
  });
  const error = request.error ? toFormError(request.error) : null;
  return (
    <Card title={t('forgot.title')}>
      {request.isSuccess ? (
        <Notice>{t('forgot.sent')}</Notice>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            request.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label={t('fields.email')} name="email" type="email" autoComplete="username" required error={error} />
          <button type="submit" disabled={request.isPending}>{t('forgot.submit')}</button>
        </form>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.backToSignIn')}</Link>
      </nav>
    </Card>
  );
}

/** `/app/{slug}/reset-password?token=…` (the mailed link): sets a new password; every session ends. */
export function ResetPasswordPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('reset.title'));
  const slug = useSlug();
  const token = useLinkToken();
  const complete = useMutation({
    mutationFn: (form: FormData) =>
      trpc.auth.completePasswordReset.mutate({ tenantSlug: slug, token: token ?? '', newPassword: formValue(form, 'newPassword') ?? '' }),
  });
  const error = complete.error ? toFormError(complete.error) : null;
  return (
    <Card title={t('reset.title')}>
      {complete.isSuccess ? (
        <Notice>{t('reset.done')}</Notice>
      ) : !token ? (
        <div role="alert" className="alert">{t('reset.incomplete')}</div>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            complete.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label={t('fields.newPassword')} name="newPassword" type="password" autoComplete="new-password" required error={error} hint={t('fields.passwordHint')} />
          <button type="submit" disabled={complete.isPending}>{t('reset.submit')}</button>
        </form>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
        <Link to="/app/$slug/forgot-password" params={{ slug }}>{t('reset.newLink')}</Link>
      </nav>
    </Card>
  );
}

/**
 * `/app/{slug}/verify-email?token=…` (the mailed link): verifies on a button press, not on load, so
 * that a mail scanner opening the link does not spend it.
 */
export function VerifyEmailPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('verify.pageTitle'));
  const slug = useSlug();
  const token = useLinkToken();
  const verify = useMutation({ mutationFn: () => trpc.auth.verifyEmail.mutate({ tenantSlug: slug, token: token ?? '' }) });
  const error = verify.error ? toFormError(verify.error) : null;
  return (
    <Card title={t('verify.title')}>
      <ErrorAlert error={error} />
      {verify.isSuccess ? (
        <Notice>{t('verify.done')}</Notice>
      ) : token ? (
        <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>{t('verify.submit')}</button>
      ) : (
        <div role="alert" className="alert">{t('verify.incomplete')}</div>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
      </nav>
    </Card>
  );
}

/**
 * `/app/{slug}/confirm-email?token=…` (the link mailed to a new address, POST me/email): confirms the
 * change on a button press, not on load, so a mail scanner opening the link does not spend it.
 */
export function ConfirmEmailChangePage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('confirmEmail.title'));
  const slug = useSlug();
  const token = useLinkToken();
  const queryClient = useQueryClient();
  const confirm = useMutation({
    mutationFn: () => trpc.auth.confirmEmailChange.mutate({ tenantSlug: slug, token: token ?? '' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['me', slug] }),
  });
  const error = confirm.error ? toFormError(confirm.error) : null;
  return (
    <Card title={t('confirmEmail.title')}>
      <ErrorAlert error={error} />
      {confirm.data ? (
        <Notice>{t('confirmEmail.done', { email: confirm.data.email })}</Notice>
      ) : token ? (
        <button type="button" onClick={() => confirm.mutate()} disabled={confirm.isPending}>{t('confirmEmail.submit')}</button>
      ) : (
        <div role="alert" className="alert">{t('confirmEmail.incomplete')}</div>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/account" params={{ slug }}>{t('nav.yourAccount')}</Link>
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
      </nav>
    </Card>
  );
}

/** `/app/{slug}/accept-invite?token=…` (the mailed link): choose a password, join, and sign in. */
const pendingInviteKey = (slug: string) => `pending-invite:${slug}`;

/** An invite link opened by a person who first signs in to accept it: kept in this tab until then. */
function rememberPendingInvite(slug: string, token: string): void {
  sessionStorage.setItem(pendingInviteKey(slug), token);
}

/** Whether an invite waits for the person to sign in (without forgetting it). */
function hasPendingInvite(slug: string): boolean {
  return sessionStorage.getItem(pendingInviteKey(slug)) !== null;
}

/** The invite kept by {@link rememberPendingInvite}, forgotten once read. */
function takePendingInvite(slug: string): string | undefined {
  const token = sessionStorage.getItem(pendingInviteKey(slug)) ?? undefined;
  sessionStorage.removeItem(pendingInviteKey(slug));
  return token;
}

/**
 * `/app/{slug}/accept-invite?token=…`: a new person chooses a password and joins (POST
 * invites/accept). A person who has an account (an invitation into an organization, docs/organizations.md)
 * signs in first and accepts as themselves (POST me/invites/accept): the link is kept in the tab
 * across the sign-in, and the page offers "Accept as {email}" once signed in.
 */
export function AcceptInvitePage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('invite.title'));
  const slug = useSlug();
  const linkToken = useLinkToken();
  const [token] = useState(() => linkToken ?? takePendingInvite(slug));
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const onSignedIn = useSignedInNavigation(slug);
  const signedIn = useSignedIn(slug);
  const me = useQuery({ queryKey: ['me', slug], queryFn: () => trpc.me.get.query({ tenantSlug: slug }), enabled: signedIn.data === true });
  const accept = useMutation({
    mutationFn: (form: FormData) => trpc.invites.accept.mutate({ token: token ?? '', password: formValue(form, 'password') ?? '' }),
    onSuccess: (session) => onSignedIn(session, session.tenantSlug),
  });
  const acceptSignedIn = useMutation({
    mutationFn: () => trpc.me.acceptInvite.mutate({ tenantSlug: slug, token: token ?? '' }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['my-organizations', slug] });
      await navigate({ to: '/app/$slug/account', params: { slug } });
    },
  });
  const signInToAccept = async () => {
    if (token) rememberPendingInvite(slug, token);
    await navigate({ to: '/app/$slug/sign-in', params: { slug } });
  };
  const error = accept.error ? toFormError(accept.error) : null;
  const signedInError = acceptSignedIn.error ? toFormError(acceptSignedIn.error) : null;
  if (!token) {
    return (
      <Card title={t('invite.title')}>
        <div role="alert" className="alert">{t('invite.incomplete')}</div>
      </Card>
    );
  }
  const asMe = signedIn.data === true && me.data ? me.data : null;
  return (
    <Card title={t('invite.title')}>
      <WorkspaceLine slug={slug} />
      {asMe && (
        <section aria-labelledby="accept-as">
          <h2 id="accept-as">{t('invite.signedInAs', { email: asMe.email })}</h2>
          <ErrorAlert error={signedInError} />
          <button type="button" onClick={() => acceptSignedIn.mutate()} disabled={acceptSignedIn.isPending}>
            {t('invite.acceptAs', { email: asMe.email })}
          </button>
        </section>
      )}
      <form
        aria-labelledby={asMe ? 'accept-new' : undefined}
        onSubmit={(e) => {
          e.preventDefault();
          accept.mutate(new FormData(e.currentTarget));
        }}
      >
        {asMe && <h2 id="accept-new">{t('invite.orNewAccount')}</h2>}
        <ErrorAlert error={error} />
        <Field label={t('fields.choosePassword')} name="password" type="password" autoComplete="new-password" required error={error} hint={t('fields.passwordHint')} />
        <button type="submit" disabled={accept.isPending}>{t('invite.submit')}</button>
      </form>
      {!asMe && (
        <p className="muted">
          {t('invite.haveAccount')}{' '}
          <button type="button" className="link" onClick={() => void signInToAccept()}>{t('invite.signInToAccept')}</button>
        </p>
      )}
    </Card>
  );
}

/** The workspace a hosted page belongs to, by its display name (the slug until it has loaded). */
function WorkspaceLine({ slug }: { slug: string }) {
  const { t } = useTranslation('auth');
  const options = useSignInOptions(slug);
  return <p className="muted">{t('workspaceLine', { name: options.data?.branding.displayName ?? slug })}</p>;
}

/**
 * "Sign in with the identity provider", shown when the workspace has it configured (`idp.signInOptions`).
 * `browser.idpStart` binds the sign-in to this browser (HttpOnly cookie) and gives the provider URL to
 * open; the provider returns to `/app/{slug}/idp-callback` (docs/web.md "Sign-in with the identity provider").
 */
function IdpSignInButton({ slug }: { slug: string }) {
  const { t } = useTranslation('auth');
  const options = useQuery({ queryKey: ['sign-in-options', slug], queryFn: () => trpc.idp.signInOptions.query({ tenantSlug: slug }) });
  const start = useMutation({
    mutationFn: () => trpc.browser.idpStart.mutate({ tenantSlug: slug }),
    onSuccess: ({ authorizationUrl }) => window.location.assign(authorizationUrl),
  });
  if (!options.data?.idpSignIn) return null;
  return (
    <div className="idp">
      <ErrorAlert error={start.error ? toFormError(start.error) : null} />
      <p className="muted">{t('signIn.or')}</p>
      <button type="button" className="secondary" onClick={() => start.mutate()} disabled={start.isPending || start.isSuccess}>
        {t('signIn.withProvider')}
      </button>
    </div>
  );
}

type CallbackParams = Partial<Record<'code' | 'state' | 'error' | 'error_description' | 'iss', string>>;

/** The authorization response the server put in the fragment (`#code=…&state=…`); nothing else is read. */
function callbackParamsOf(hash: string): CallbackParams {
  const fragment = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const params: CallbackParams = {};
  for (const name of ['code', 'state', 'error', 'error_description', 'iss'] as const) {
    const value = fragment.get(name);
    if (value !== null) params[name] = value;
  }
  return params;
}

/**
 * `/app/{slug}/idp-callback#code=…&state=…`: where the service sends the browser back from the provider.
 * Reads the parameters once, removes them from the address bar, and completes the sign-in with
 * `browser.idpCallback` (the browser's binding cookie goes with it); when the workspace asks for a
 * second factor, asks for it and finishes with `auth.mfaComplete`.
 */
export function IdpCallbackPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('idpCallback.pageTitle'));
  const slug = useSlug();
  const onSignedIn = useSignedInNavigation(slug);
  const [params] = useState(() => callbackParamsOf(window.location.hash));
  const started = useRef(false);
  const complete = useMutation({
    mutationFn: () => trpc.browser.idpCallback.mutate({ tenantSlug: slug, ...params }),
    onSuccess: (session) => onSignedIn(session),
  });
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(window.history.state, '', window.location.pathname);
    if (started.current || (!params.state && !params.error)) return;
    started.current = true;
    complete.mutate();
  }, [complete, params]);

  const error = complete.error ? toFormError(complete.error) : null;
  return <ProviderReturn slug={slug} arrived={Boolean(params.state || params.error)} error={error} onSignedIn={onSignedIn} />;
}

/**
 * What a page the browser returns to from an identity provider shows: that it is signing in, the
 * refusal in words, or the second factor the workspace asks for (`mfa_required`); a page opened
 * without the provider's answer (`arrived` false) says where to start instead.
 */
function ProviderReturn({ slug, arrived, error, onSignedIn }: {
  slug: string;
  arrived: boolean;
  error: FormError | null;
  onSignedIn: (session: { accessToken: string; accessTokenExpiresIn: number }) => Promise<void>;
}) {
  const { t } = useTranslation('auth');
  const mfaToken = error?.reason === 'mfa_required' && typeof error.details.mfaToken === 'string' ? error.details.mfaToken : null;
  if (mfaToken) return <SecondFactorWithToken slug={slug} mfaToken={mfaToken} factors={factorsOf(error)} onSignedIn={onSignedIn} />;
  return (
    <Card title={t('idpCallback.title')}>
      {!arrived ? (
        <div role="alert" className="alert">{t('idpCallback.notFromProvider')}</div>
      ) : error ? (
        <ErrorAlert error={error} />
      ) : (
        <p role="status" className="loading">{t('idpCallback.signingIn')}</p>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.backToSignIn')}</Link>
      </nav>
    </Card>
  );
}

/**
 * `/app/{slug}/sso-callback#code=…` (or `#error=<reason>`): where the assertion consumer service sends
 * the browser after the company's identity provider answered (docs/sso.md). Reads the fragment once,
 * removes it from the address bar, and completes the sign-in with `browser.ssoComplete` (the
 * browser's binding cookie goes with it); asks for a second factor when the workspace wants one; then
 * goes back to the application that asked for the sign-in, or to the `returnTo` path, or the account.
 */
export function SsoCallbackPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('idpCallback.pageTitle'));
  const slug = useSlug();
  const onSignedIn = useSignedInNavigation(slug);
  const [fragment] = useState(() => new URLSearchParams(window.location.hash.replace(/^#/, '')));
  const code = fragment.get('code');
  const refused = fragment.get('error');
  const started = useRef(false);
  const complete = useMutation({
    mutationFn: () => trpc.browser.ssoComplete.mutate({ tenantSlug: slug, code: code ?? '' }),
    onSuccess: async (session) => {
      if (session.returnTo && !hasInteraction(slug)) {
        rememberSession(slug, session);
        window.location.assign(session.returnTo);
        return;
      }
      await onSignedIn(session);
    },
  });
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(window.history.state, '', window.location.pathname);
    if (started.current || !code) return;
    started.current = true;
    complete.mutate();
  }, [complete, code]);

  const error = complete.error ? toFormError(complete.error) : refused ? reasonAsFormError(refused) : null;
  return <ProviderReturn slug={slug} arrived={Boolean(code || refused)} error={error} onSignedIn={onSignedIn} />;
}

/**
 * The second factor of a provider sign-in (`mfa_required` with an `mfaToken`, valid 5 minutes): an
 * authenticator code, or a mailed code sent to the address the person types (auth/request-email-otp
 * answers the same whether or not the account exists).
 */
function SecondFactorWithToken({ slug, mfaToken, factors, onSignedIn }: {
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
