import { startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Navigate, Outlet, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { forgetSession, PasskeyPromptError, toFormError, toPasskeyError, trpc } from '../api';
import { useMe, usePageTitle, useSignedIn, useSlug } from '../hooks';
import { deviceName } from '../device-name';
import { ErrorAlert, Field, formValue, Notice, RecoveryCodeList, TotpSecret } from '../ui';
import { ResendVerification } from './auth';

/** Pages that need a session: restores it from the refresh cookie, or sends the browser to sign-in. */
export function SignedInLayout() {
  const slug = useSlug();
  const signedIn = useSignedIn(slug);
  const me = useMe(slug, signedIn.data === true);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation({
    mutationFn: () => trpc.browser.logout.mutate({ tenantSlug: slug }),
    onSettled: async () => {
      forgetSession(slug);
      queryClient.removeQueries({ queryKey: ['me', slug] });
      queryClient.setQueryData(['session', slug], false);
      await navigate({ to: '/app/$slug/sign-in', params: { slug } });
    },
  });

  if (signedIn.isPending) return <p role="status" className="loading">Loading…</p>;
  if (signedIn.data !== true) return <Navigate to="/app/$slug/sign-in" params={{ slug }} />;
  return (
    <>
      <header className="topbar">
        <span className="brand">{me.data?.tenant.name ?? slug}</span>
        <nav aria-label="Main">
          <Link to="/app/$slug/account" params={{ slug }}>Account</Link>
          {me.data?.role === 'Admin' && <Link to="/app/$slug/admin" params={{ slug }}>Admin console</Link>}
          <button type="button" className="link" onClick={() => signOut.mutate()}>Sign out</button>
        </nav>
      </header>
      <Outlet />
    </>
  );
}

/** `/app/{slug}/account`: the signed-in user's own account. */
export function AccountPage() {
  usePageTitle('Your account');
  const slug = useSlug();
  const me = useMe(slug, true);
  // Codes just issued (on enabling TOTP or regenerating), kept here so they outlive the enrolment form.
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  if (me.isPending) return <p role="status" className="loading">Loading…</p>;
  if (me.error) return <ErrorAlert error={toFormError(me.error)} />;
  const user = me.data;
  return (
    <main className="page" id="main">
      <h1>Your account</h1>
      <dl className="facts">
        <dt>Email</dt>
        <dd>
          {user.email}{' '}
          <span className={user.emailVerified ? 'badge' : 'badge warning'}>{user.emailVerified ? 'Verified' : 'Not verified'}</span>
        </dd>
        <dt>Role</dt>
        <dd>{user.role}</dd>
        <dt>Workspace</dt>
        <dd>{user.tenant.name} ({user.tenant.slug})</dd>
        <dt>Authenticator app</dt>
        <dd>{user.totpEnrolled ? 'On' : 'Off'}</dd>
        {user.recoveryCodesRemaining !== null && (
          <>
            <dt>Recovery codes left</dt>
            <dd>{user.recoveryCodesRemaining}</dd>
          </>
        )}
      </dl>
      {!user.emailVerified && <ResendVerification slug={slug} email={user.email} />}
      {!user.totpEnrolled && <TotpEnrolment slug={slug} onRecoveryCodes={setRecoveryCodes} />}
      {user.totpEnrolled && <TotpOff slug={slug} onOff={() => setRecoveryCodes(null)} />}
      {user.totpEnrolled && <RecoveryCodes slug={slug} codes={recoveryCodes} onRecoveryCodes={setRecoveryCodes} />}
      <Passkeys slug={slug} />
      <ChangeEmail slug={slug} passwordSet={user.passwordSet} />
      <ChangePassword slug={slug} />
      <DataExport slug={slug} />
      <SessionControls slug={slug} />
      <DeleteAccount slug={slug} />
    </main>
  );
}

function TotpEnrolment({ slug, onRecoveryCodes }: { slug: string; onRecoveryCodes: (codes: string[]) => void }) {
  const queryClient = useQueryClient();
  const enrol = useMutation({ mutationFn: () => trpc.mfa.totpEnroll.mutate({ tenantSlug: slug }) });
  const verify = useMutation({
    mutationFn: (form: FormData) => trpc.mfa.totpVerify.mutate({ tenantSlug: slug, code: formValue(form, 'code') ?? '' }),
    onSuccess: (answer) => {
      onRecoveryCodes(answer.recoveryCodes);
      return queryClient.invalidateQueries({ queryKey: ['me', slug] });
    },
  });
  const error = enrol.error ? toFormError(enrol.error) : verify.error ? toFormError(verify.error) : null;
  return (
    <section aria-labelledby="totp-heading" className="panel">
      <h2 id="totp-heading">Authenticator app</h2>
      <ErrorAlert error={error} />
      {!enrol.data ? (
        <button type="button" onClick={() => enrol.mutate()} disabled={enrol.isPending}>Set up authenticator app</button>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            verify.mutate(new FormData(e.currentTarget));
          }}
        >
          <TotpSecret secret={enrol.data.secret} otpauthUri={enrol.data.otpauthUri} />
          <Field label="Authenticator code" name="code" inputMode="numeric" autoComplete="one-time-code" required error={error} />
          <button type="submit" disabled={verify.isPending}>Turn on</button>
        </form>
      )}
    </section>
  );
}

/** Passkeys of the user (docs/passkeys.md): list, add (browser WebAuthn ceremony), delete. */
function Passkeys({ slug }: { slug: string }) {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: ['passkeys', slug], queryFn: () => trpc.me.passkeys.query({ tenantSlug: slug }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['passkeys', slug] });
  const add = useMutation({
    mutationFn: async (name: string | undefined) => {
      const optionsJSON = await trpc.mfa.passkeyRegistrationOptions.mutate({ tenantSlug: slug });
      const response = await startRegistration({ optionsJSON }).catch((err: unknown) => {
        throw new PasskeyPromptError(err, optionsJSON.rp.id);
      });
      return trpc.mfa.passkeyRegistrationVerify.mutate({ tenantSlug: slug, response, ...(name ? { name } : {}) });
    },
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => trpc.me.deletePasskey.mutate({ tenantSlug: slug, id }),
    onSuccess: refresh,
  });
  const error = add.error ? toPasskeyError(add.error) : remove.error ? toFormError(remove.error) : list.error ? toFormError(list.error) : null;
  return (
    <section aria-labelledby="passkeys-heading" className="panel">
      <h2 id="passkeys-heading">Passkeys</h2>
      <ErrorAlert error={error} />
      {list.data && list.data.items.length > 0 ? (
        <ul aria-label="Your passkeys">
          {list.data.items.map((p) => (
            <li key={p.id}>
              {p.name} <span className="muted">added {new Date(p.createdAt).toLocaleDateString()}{p.lastUsedAt ? `, last used ${new Date(p.lastUsedAt).toLocaleString()}` : ''}</span>{' '}
              <button type="button" className="secondary" onClick={() => remove.mutate(p.id)} disabled={remove.isPending} aria-label={`Delete passkey ${p.name}`}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      ) : (
        list.data && <p className="muted">No passkey yet. A passkey signs you in with your device's screen lock instead of a password.</p>
      )}
      {add.isSuccess && <Notice>Passkey added.</Notice>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          add.mutate(formValue(new FormData(form), 'passkeyName'), { onSuccess: () => form.reset() });
        }}
      >
        <Field label="Passkey name (optional)" name="passkeyName" error={null} />
        <button type="submit" disabled={add.isPending}>Add a passkey</button>
      </form>
    </section>
  );
}

/** The recovery codes of an enrolled user: the ones just issued (shown once) and "generate new codes". */
function RecoveryCodes({ slug, codes, onRecoveryCodes }: { slug: string; codes: string[] | null; onRecoveryCodes: (codes: string[]) => void }) {
  const queryClient = useQueryClient();
  const regenerate = useMutation({
    mutationFn: () => trpc.mfa.recoveryCodes.mutate({ tenantSlug: slug }),
    onSuccess: (answer) => {
      onRecoveryCodes(answer.recoveryCodes);
      return queryClient.invalidateQueries({ queryKey: ['me', slug] });
    },
  });
  return (
    <section aria-labelledby="recovery-heading" className="panel">
      <h2 id="recovery-heading">Recovery codes</h2>
      <ErrorAlert error={regenerate.error ? toFormError(regenerate.error) : null} />
      {codes && <RecoveryCodeList codes={codes} workspace={slug} />}
      <p className="hint">Generating new codes makes the old ones stop working. It needs a sign-in less than 10 minutes old.</p>
      <button type="button" className="secondary" onClick={() => regenerate.mutate()} disabled={regenerate.isPending}>
        Generate new recovery codes
      </button>
    </section>
  );
}

/**
 * Turning the authenticator app off (DELETE mfa/totp), after a confirmation: the secret and the
 * recovery codes go. Needs a sign-in less than 10 minutes old.
 */
function TotpOff({ slug, onOff }: { slug: string; onOff: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const queryClient = useQueryClient();
  const turnOff = useMutation({
    mutationFn: () => trpc.mfa.totpDisable.mutate({ tenantSlug: slug }),
    onSuccess: () => {
      setConfirming(false);
      onOff();
      return queryClient.invalidateQueries({ queryKey: ['me', slug] });
    },
  });
  return (
    <section aria-labelledby="totp-off-heading" className="panel">
      <h2 id="totp-off-heading">Authenticator app</h2>
      <ErrorAlert error={turnOff.error ? toFormError(turnOff.error) : null} />
      {!confirming ? (
        <button type="button" className="secondary" onClick={() => setConfirming(true)}>Turn off authenticator app</button>
      ) : (
        <div role="group" aria-label="Confirm turning off the authenticator app">
          <p>
            Sign-ins will no longer ask for a code from your authenticator app, and your recovery codes stop working. Where the workspace
            requires a second factor, sign-ins ask for a code mailed to you instead. It needs a sign-in less than 10 minutes old.
          </p>
          <button type="button" className="danger" onClick={() => turnOff.mutate()} disabled={turnOff.isPending}>Yes, turn it off</button>
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>Cancel</button>
        </div>
      )}
    </section>
  );
}

/**
 * Changing the sign-in email (POST me/email): the current password when the account has one; a
 * confirmation link goes to the new address, and the address changes only when it is opened.
 */
function ChangeEmail({ slug, passwordSet }: { slug: string; passwordSet: boolean }) {
  const change = useMutation({
    mutationFn: (form: FormData) =>
      trpc.me.requestEmailChange.mutate({
        tenantSlug: slug,
        newEmail: formValue(form, 'newEmail') ?? '',
        ...(passwordSet ? { currentPassword: formValue(form, 'currentPassword') ?? '' } : {}),
      }),
  });
  const error = change.error ? toFormError(change.error) : null;
  return (
    <section aria-labelledby="email-heading" className="panel">
      <h2 id="email-heading">Change email</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          change.mutate(new FormData(form), { onSuccess: () => form.reset() });
        }}
      >
        <ErrorAlert error={error} />
        {change.isSuccess && (
          <Notice>
            We sent a confirmation link to {change.variables.get('newEmail')?.toString().trim()}. Your sign-in email changes when you open it
            (within 24 hours).
          </Notice>
        )}
        <Field label="New email" name="newEmail" type="email" autoComplete="email" required error={error} />
        {passwordSet && <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" required error={error} />}
        <p className="hint">It needs a sign-in less than 10 minutes old. Your current address is told once the change is done.</p>
        <button type="submit" disabled={change.isPending}>Send confirmation link</button>
      </form>
    </section>
  );
}

function ChangePassword({ slug }: { slug: string }) {
  const change = useMutation({
    mutationFn: (form: FormData) =>
      trpc.me.changePassword.mutate({
        tenantSlug: slug,
        currentPassword: formValue(form, 'currentPassword') ?? '',
        newPassword: formValue(form, 'newPassword') ?? '',
      }),
  });
  const error = change.error ? toFormError(change.error) : null;
  return (
    <section aria-labelledby="password-heading" className="panel">
      <h2 id="password-heading">Change password</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          change.mutate(new FormData(form), { onSuccess: () => form.reset() });
        }}
      >
        <ErrorAlert error={error} />
        {change.isSuccess && <Notice>Your password was changed.</Notice>}
        <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" required error={error} />
        <Field label="New password" name="newPassword" type="password" autoComplete="new-password" required error={error} hint="At least 12 characters." />
        <button type="submit" disabled={change.isPending}>Change password</button>
      </form>
    </section>
  );
}

function DataExport({ slug }: { slug: string }) {
  const exportData = useMutation({
    mutationFn: () => trpc.me.exportMe.query({ tenantSlug: slug }),
    onSuccess: (data) => {
      const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `account-export-${slug}.json`;
      a.click();
      URL.revokeObjectURL(url);
    },
  });
  return (
    <section aria-labelledby="export-heading" className="panel">
      <h2 id="export-heading">Your data</h2>
      <ErrorAlert error={exportData.error ? toFormError(exportData.error) : null} />
      <button type="button" className="secondary" onClick={() => exportData.mutate()} disabled={exportData.isPending}>Download my data</button>
    </section>
  );
}

function SessionControls({ slug }: { slug: string }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const everywhere = useMutation({
    mutationFn: () => trpc.auth.logoutAll.mutate({ tenantSlug: slug }),
    onSuccess: async () => {
      await trpc.browser.logout.mutate({ tenantSlug: slug }).catch(() => undefined);
      forgetSession(slug);
      queryClient.clear();
      await navigate({ to: '/app/$slug/sign-in', params: { slug } });
    },
  });
  const sessions = useQuery({ queryKey: ['sessions', slug], queryFn: () => trpc.me.listSessions.query({ tenantSlug: slug }) });
  const endOne = useMutation({
    mutationFn: (sessionId: string) => trpc.me.revokeSession.mutate({ tenantSlug: slug, sessionId }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['sessions', slug] }),
  });
  const error = everywhere.error ?? endOne.error ?? sessions.error;
  return (
    <section aria-labelledby="sessions-heading" className="panel">
      <h2 id="sessions-heading">Sessions</h2>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {sessions.data && (
        <ul className="sessions" aria-label="Signed-in devices">
          {sessions.data.items.map((session) => (
            <li key={session.id}>
              <strong title={session.userAgent ?? undefined}>{deviceName(session.userAgent)}</strong>
              {session.current && <span className="muted"> (this device)</span>}
              <br />
              <span className="hint">
                {session.ip ?? 'unknown address'} · {session.method ?? 'sign-in method not recorded'} · signed in {new Date(session.createdAt).toLocaleString()} ·
                last used {new Date(session.lastUsedAt).toLocaleString()}
              </span>
              {!session.current && (
                <>
                  {' '}
                  <button type="button" className="link" onClick={() => endOne.mutate(session.id)} disabled={endOne.isPending}>
                    Sign out this device
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <button type="button" className="secondary" onClick={() => everywhere.mutate()} disabled={everywhere.isPending}>Sign out everywhere</button>
    </section>
  );
}

function DeleteAccount({ slug }: { slug: string }) {
  const [confirming, setConfirming] = useState(false);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const remove = useMutation({
    mutationFn: () => trpc.me.delete.mutate({ tenantSlug: slug }),
    onSuccess: async () => {
      await trpc.browser.logout.mutate({ tenantSlug: slug }).catch(() => undefined);
      forgetSession(slug);
      queryClient.clear();
      await navigate({ to: '/app/$slug/sign-in', params: { slug } });
    },
  });
  return (
    <section aria-labelledby="delete-heading" className="panel danger">
      <h2 id="delete-heading">Delete account</h2>
      <ErrorAlert error={remove.error ? toFormError(remove.error) : null} />
      {!confirming ? (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>Delete my account</button>
      ) : (
        <div role="group" aria-label="Confirm account deletion">
          <p>This signs you out everywhere and removes your account. It cannot be undone.</p>
          <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>Yes, delete my account</button>
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>Cancel</button>
        </div>
      )}
    </section>
  );
}
