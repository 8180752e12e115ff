import { startAuthentication } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { currentAccessToken, PasskeyPromptError, rememberSession, restoreSession, toFormError, toPasskeyError, trpc, type FormError } from '../api';
import { finishInteraction, interactionInfo, rememberInteraction, takeInteraction } from '../oidc-interaction';
import { useLinkToken, usePageTitle, useSignInOptions, useSlug } from '../hooks';
import { Card, ErrorAlert, Field, formValue, Notice, RecoveryCodeList, TotpSecret } from '../ui';

type SecondFactor = 'totp' | 'email';

function factorsOf(error: FormError | null): SecondFactor[] {
  if (error?.reason !== 'mfa_required') return [];
  const methods = error.details.methods;
  return Array.isArray(methods) ? methods.filter((m): m is SecondFactor => m === 'totp' || m === 'email') : [];
}

/**
 * After a session is issued: keep the access token, then go back to the application that asked for
 * the sign-in (OpenID Provider interaction), or else open the account page.
 */
function useSignedInNavigation(slug: string) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  return async (session: { accessToken: string; accessTokenExpiresIn: number }, tenantSlug = slug) => {
    rememberSession(tenantSlug, session);
    queryClient.removeQueries({ queryKey: ['me', tenantSlug] });
    queryClient.setQueryData(['session', tenantSlug], true);
    const uid = takeInteraction(tenantSlug);
    if (uid) {
      const finished = await finishInteraction(tenantSlug, uid, session.accessToken);
      if ('redirectTo' in finished) {
        window.location.assign(finished.redirectTo);
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
  const [clientName, setClientName] = useState<string>();
  useEffect(() => {
    if (!interaction) return;
    rememberInteraction(slug, interaction);
    let cancelled = false;
    void (async () => {
      const info = await interactionInfo(slug, interaction);
      if (cancelled || !info) return;
      setClientName(info.clientName);
      if (info.freshSignInRequired || !(await restoreSession(slug))) return;
      const token = currentAccessToken(slug);
      if (!token || cancelled) return;
      const finished = await finishInteraction(slug, takeInteraction(slug) ?? interaction, token);
      if ('redirectTo' in finished) window.location.assign(finished.redirectTo);
      else rememberInteraction(slug, interaction);
    })();
    return () => {
      cancelled = true;
    };
  }, [slug, interaction]);
  return clientName;
}

/**
 * `/app/{slug}/sign-in`: email and password, then the second factor when the tenant's policy asks
 * (docs/mfa.md): the authenticator code for an enrolled user (`methods` `["totp"]`); otherwise the
 * mailed code, and under `Required` (`["email","totp"]`, not enrolled) also "Set up an authenticator
 * instead", which enrols with auth.totpInitialEnroll / auth.totpInitialVerify and the same email code.
 */
export function SignInPage() {
  usePageTitle('Sign in');
  const slug = useSlug();
  const onSignedIn = useSignedInNavigation(slug);
  const applicationName = useApplicationSignIn(slug);
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
  const error = login.error ? toFormError(login.error) : null;
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
      <Card title="Your authenticator app is on">
        <RecoveryCodeList codes={session.recoveryCodes} workspace={slug} />
        <button type="button" onClick={() => void onSignedIn(session)}>I saved my recovery codes, continue</button>
      </Card>
    );
  }

  if (credentials && enrol.data) {
    const enrolError = enrolVerify.error ? toFormError(enrolVerify.error) : null;
    return (
      <Card title="Set up your authenticator app">
        <ErrorAlert error={enrolError} />
        <form
          onSubmit={(e) => {
            e.preventDefault();
            enrolVerify.mutate(formValue(new FormData(e.currentTarget), 'code') ?? '');
          }}
        >
          <TotpSecret secret={enrol.data.secret} otpauthUri={enrol.data.otpauthUri} />
          <Field label="Authenticator code" name="code" inputMode="numeric" autoComplete="one-time-code" required error={enrolError} />
          <button type="submit" disabled={enrolVerify.isPending}>Turn on and sign in</button>
        </form>
        <p>
          <button type="button" className="link" onClick={startOver}>Start over</button>
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
      <Card key="second-factor" title="Second factor">
        <ErrorAlert error={emailError ?? (sendEmailCode.error ? toFormError(sendEmailCode.error) : null)} />
        {enrolled && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              login.mutate({ ...credentials, totpCode: formValue(new FormData(e.currentTarget), 'totpCode') ?? '' });
            }}
          >
            <Field label="Authenticator code" name="totpCode" inputMode="numeric" autoComplete="one-time-code" required error={shownError} />
            <button type="submit" disabled={login.isPending}>Verify</button>
          </form>
        )}
        {enrolled && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              login.mutate({ ...credentials, recoveryCode: formValue(new FormData(e.currentTarget), 'recoveryCode') ?? '' });
            }}
          >
            <p className="hint">Lost your authenticator app? Use one of your recovery codes instead; each works once.</p>
            <Field label="Recovery code" name="recoveryCode" autoComplete="off" required error={shownError} />
            <button type="submit" className="secondary" disabled={login.isPending}>Use recovery code</button>
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
              Email me a code
            </button>
            {emailCodeSent && <Notice>We sent a 6-digit code to {credentials.email}. It is valid for 10 minutes.</Notice>}
            <Field label="Email code" name="emailOtpCode" inputMode="numeric" autoComplete="one-time-code" required error={emailError} />
            <button type="submit" value="sign-in" disabled={login.isPending || enrol.isPending}>Verify email code</button>
            {canEnrol && (
              <>
                <p className="hint">Or use the code to add an authenticator app now; later sign-ins then ask for its code.</p>
                <button type="submit" value="enrol" className="secondary" disabled={login.isPending || enrol.isPending}>
                  Set up an authenticator instead
                </button>
              </>
            )}
          </form>
        )}
        <p>
          <button type="button" className="link" onClick={startOver}>Start over</button>
        </p>
      </Card>
    );
  }

  return (
    <Card title="Sign in">
      <WorkspaceLine slug={slug} />
      {applicationName && <p>Sign in to continue to <strong>{applicationName}</strong>.</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          login.mutate({ email: formValue(form, 'email') ?? '', password: formValue(form, 'password') ?? '' });
        }}
      >
        <ErrorAlert error={shownError} />
        <Field label="Email" name="email" type="email" autoComplete="username" required error={shownError} />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required error={shownError} />
        <button type="submit" disabled={login.isPending}>Sign in</button>
      </form>
      {shownError?.reason === 'email_not_verified' && login.variables && <ResendVerification key={login.variables.email} slug={slug} email={login.variables.email} />}
      <PasskeySignInButton slug={slug} onSignedIn={onSignedIn} />
      <IdpSignInButton slug={slug} />
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/forgot-password" params={{ slug }}>Forgot password?</Link>
        <Link to="/app/$slug/sign-up" params={{ slug }}>Create an account</Link>
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
  const resend = useMutation({ mutationFn: () => trpc.auth.requestEmailVerification.mutate({ tenantSlug: slug, email }) });
  return (
    <div className="resend-verification">
      <ErrorAlert error={resend.error ? toFormError(resend.error) : null} />
      {resend.isSuccess ? (
        <Notice>We sent a new verification link to {email}. It is valid for 24 hours.</Notice>
      ) : (
        <button type="button" className="secondary" onClick={() => resend.mutate()} disabled={resend.isPending}>Resend verification link</button>
      )}
    </div>
  );
}

/** "Use a passkey" on the sign-in page: a discoverable-credential ceremony, no email typed (docs/passkeys.md). */
function PasskeySignInButton({ slug, onSignedIn }: { slug: string; onSignedIn: ReturnType<typeof useSignedInNavigation> }) {
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
      <button type="button" className="secondary" onClick={() => signIn.mutate()} disabled={signIn.isPending}>Use a passkey</button>
    </div>
  );
}

/** `/app/{slug}/sign-up`: a Member account with email and password. */
export function SignUpPage() {
  usePageTitle('Create your account');
  const slug = useSlug();
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
      <Card title="Check your email">
        <Notice>We sent a verification link to {pendingEmail}. Open it to activate your account, then sign in.</Notice>
        <Link to="/app/$slug/sign-in" params={{ slug }}>Sign in</Link>
      </Card>
    );
  }
  return (
    <Card title="Create your account">
      <WorkspaceLine slug={slug} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          signup.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        <Field label="Email" name="email" type="email" autoComplete="username" required error={error} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" required error={error} hint="At least 12 characters." />
        <button type="submit" disabled={signup.isPending}>Sign up</button>
      </form>
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>I already have an account</Link>
      </nav>
    </Card>
  );
}

/** `/app/{slug}/forgot-password`: asks for a reset link (the answer never says whether the account exists). */
export function ForgotPasswordPage() {
  usePageTitle('Forgot password');
  const slug = useSlug();
  const request = useMutation({
    mutationFn: (form: FormData) => trpc.auth.requestPasswordReset.mutate({ tenantSlug: slug, email: formValue(form, 'email') ?? '' }),
  });
  const error = request.error ? toFormError(request.error) : null;
  return (
    <Card title="Reset your password">
      {request.isSuccess ? (
        <Notice>If an account exists for that address, a reset link is on its way. It is valid for a limited time.</Notice>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            request.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label="Email" name="email" type="email" autoComplete="username" required error={error} />
          <button type="submit" disabled={request.isPending}>Email me a reset link</button>
        </form>
      )}
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>Back to sign-in</Link>
      </nav>
    </Card>
  );
}

/** `/app/{slug}/reset-password?token=…` (the mailed link): sets a new password; every session ends. */
export function ResetPasswordPage() {
  usePageTitle('Choose a new password');
  const slug = useSlug();
  const token = useLinkToken();
  const complete = useMutation({
    mutationFn: (form: FormData) =>
      trpc.auth.completePasswordReset.mutate({ tenantSlug: slug, token: token ?? '', newPassword: formValue(form, 'newPassword') ?? '' }),
  });
  const error = complete.error ? toFormError(complete.error) : null;
  return (
    <Card title="Choose a new password">
      {complete.isSuccess ? (
        <Notice>Your password was changed and every session was signed out.</Notice>
      ) : !token ? (
        <div role="alert" className="alert">This reset link is incomplete. Ask for a new one.</div>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            complete.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label="New password" name="newPassword" type="password" autoComplete="new-password" required error={error} hint="At least 12 characters." />
          <button type="submit" disabled={complete.isPending}>Set new password</button>
        </form>
      )}
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>Sign in</Link>
        <Link to="/app/$slug/forgot-password" params={{ slug }}>Ask for a new link</Link>
      </nav>
    </Card>
  );
}

/**
 * `/app/{slug}/verify-email?token=…` (the mailed link): verifies on a button press, not on load, so
 * that a mail scanner opening the link does not spend it.
 */
export function VerifyEmailPage() {
  usePageTitle('Confirm your email address');
  const slug = useSlug();
  const token = useLinkToken();
  const verify = useMutation({ mutationFn: () => trpc.auth.verifyEmail.mutate({ tenantSlug: slug, token: token ?? '' }) });
  const error = verify.error ? toFormError(verify.error) : null;
  return (
    <Card title="Verify your email">
      <ErrorAlert error={error} />
      {verify.isSuccess ? (
        <Notice>Your email address is verified.</Notice>
      ) : token ? (
        <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>Verify my email</button>
      ) : (
        <div role="alert" className="alert">This verification link is incomplete. Sign in and ask for a new one.</div>
      )}
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>Sign in</Link>
      </nav>
    </Card>
  );
}

/**
 * `/app/{slug}/confirm-email?token=…` (the link mailed to a new address, POST me/email): confirms the
 * change on a button press, not on load, so a mail scanner opening the link does not spend it.
 */
export function ConfirmEmailChangePage() {
  usePageTitle('Confirm your new email address');
  const slug = useSlug();
  const token = useLinkToken();
  const queryClient = useQueryClient();
  const confirm = useMutation({
    mutationFn: () => trpc.auth.confirmEmailChange.mutate({ tenantSlug: slug, token: token ?? '' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['me', slug] }),
  });
  const error = confirm.error ? toFormError(confirm.error) : null;
  return (
    <Card title="Confirm your new email address">
      <ErrorAlert error={error} />
      {confirm.data ? (
        <Notice>Your sign-in email is now {confirm.data.email}.</Notice>
      ) : token ? (
        <button type="button" onClick={() => confirm.mutate()} disabled={confirm.isPending}>Confirm my new email address</button>
      ) : (
        <div role="alert" className="alert">This confirmation link is incomplete. Ask for the change again from your account page.</div>
      )}
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/account" params={{ slug }}>Your account</Link>
        <Link to="/app/$slug/sign-in" params={{ slug }}>Sign in</Link>
      </nav>
    </Card>
  );
}

/** `/app/{slug}/accept-invite?token=…` (the mailed link): choose a password, join, and sign in. */
export function AcceptInvitePage() {
  usePageTitle('Join the workspace');
  const slug = useSlug();
  const token = useLinkToken();
  const onSignedIn = useSignedInNavigation(slug);
  const accept = useMutation({
    mutationFn: (form: FormData) => trpc.invites.accept.mutate({ token: token ?? '', password: formValue(form, 'password') ?? '' }),
    onSuccess: (session) => onSignedIn(session, session.tenantSlug),
  });
  const error = accept.error ? toFormError(accept.error) : null;
  return (
    <Card title="Join the workspace">
      {!token ? (
        <div role="alert" className="alert">This invite link is incomplete. Ask your admin for a new one.</div>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            accept.mutate(new FormData(e.currentTarget));
          }}
        >
          <WorkspaceLine slug={slug} />
          <ErrorAlert error={error} />
          <Field label="Choose a password" name="password" type="password" autoComplete="new-password" required error={error} hint="At least 12 characters." />
          <button type="submit" disabled={accept.isPending}>Accept invite</button>
        </form>
      )}
    </Card>
  );
}

/** The workspace a hosted page belongs to, by its display name (the slug until it has loaded). */
function WorkspaceLine({ slug }: { slug: string }) {
  const options = useSignInOptions(slug);
  return <p className="muted">Workspace {options.data?.branding.displayName ?? slug}</p>;
}

/**
 * "Sign in with the identity provider", shown when the workspace has it configured (`idp.signInOptions`).
 * `browser.idpStart` binds the sign-in to this browser (HttpOnly cookie) and gives the provider URL to
 * open; the provider returns to `/app/{slug}/idp-callback` (docs/web.md "Sign-in with the identity provider").
 */
function IdpSignInButton({ slug }: { slug: string }) {
  const options = useQuery({ queryKey: ['sign-in-options', slug], queryFn: () => trpc.idp.signInOptions.query({ tenantSlug: slug }) });
  const start = useMutation({
    mutationFn: () => trpc.browser.idpStart.mutate({ tenantSlug: slug }),
    onSuccess: ({ authorizationUrl }) => window.location.assign(authorizationUrl),
  });
  if (!options.data?.idpSignIn) return null;
  return (
    <div className="idp">
      <ErrorAlert error={start.error ? toFormError(start.error) : null} />
      <p className="muted">or</p>
      <button type="button" className="secondary" onClick={() => start.mutate()} disabled={start.isPending || start.isSuccess}>
        Sign in with the identity provider
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
  usePageTitle('Signing in');
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
  const mfaToken = error?.reason === 'mfa_required' && typeof error.details.mfaToken === 'string' ? error.details.mfaToken : null;
  if (mfaToken) return <SecondFactorWithToken slug={slug} mfaToken={mfaToken} factors={factorsOf(error)} onSignedIn={onSignedIn} />;
  return (
    <Card title="Signing in with the identity provider">
      {!params.state && !params.error ? (
        <div role="alert" className="alert">This page is opened by the identity provider after you sign in there. Start from the sign-in page.</div>
      ) : error ? (
        <ErrorAlert error={error} />
      ) : (
        <p role="status" className="loading">Signing you in…</p>
      )}
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>Back to sign-in</Link>
      </nav>
    </Card>
  );
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
    <Card title="Second factor">
      <ErrorAlert error={error} />
      {factors.includes('totp') && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            complete.mutate({ totpCode: formValue(new FormData(e.currentTarget), 'totpCode') ?? '' });
          }}
        >
          <Field label="Authenticator code" name="totpCode" inputMode="numeric" autoComplete="one-time-code" required error={error} />
          <button type="submit" disabled={complete.isPending}>Verify</button>
        </form>
      )}
      {factors.includes('totp') && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            complete.mutate({ recoveryCode: formValue(new FormData(e.currentTarget), 'recoveryCode') ?? '' });
          }}
        >
          <p className="hint">Lost your authenticator app? Use one of your recovery codes instead; each works once.</p>
          <Field label="Recovery code" name="recoveryCode" autoComplete="off" required error={error} />
          <button type="submit" className="secondary" disabled={complete.isPending}>Use recovery code</button>
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
            <Field label="Your email" name="email" type="email" autoComplete="username" required error={sendEmailCode.error ? error : null} />
            <button type="submit" className="secondary" disabled={sendEmailCode.isPending}>Email me a code</button>
          </form>
          {emailSentTo && <Notice>If {emailSentTo} is your account's address, a 6-digit code is on its way. It is valid for 10 minutes.</Notice>}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              complete.mutate({ emailOtpCode: formValue(new FormData(e.currentTarget), 'emailOtpCode') ?? '' });
            }}
          >
            <Field label="Email code" name="emailOtpCode" inputMode="numeric" autoComplete="one-time-code" required error={complete.error ? error : null} />
            <button type="submit" disabled={complete.isPending}>Verify email code</button>
          </form>
        </>
      )}
      <nav aria-label="Account help" className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>Start over</Link>
      </nav>
    </Card>
  );
}
