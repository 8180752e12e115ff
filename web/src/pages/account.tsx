import { startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Navigate, Outlet, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatDate, formatDateTime, formatNumber } from '../i18n';
import { forgetSession, PasskeyPromptError, toFormError, toPasskeyError, trpc } from '../api';
import { forgetPersonData, useMe, usePageTitle, useSignedIn, useSignInOptions, useSlug } from '../hooks';
import { deviceName } from '../device-name';
import { ErrorAlert, Field, formValue, Notice, RecoveryCodeList, TotpSecret, useSessionMethodLabel } from '../ui';
import { ResendVerification } from './auth-parts';
import { Avatar } from '../avatar';
import { BrandMark } from '../brand';

/** Pages that need a session: restores it from the refresh cookie, or sends the browser to sign-in. */
export function SignedInLayout() {
  const { t } = useTranslation('account');
  const slug = useSlug();
  const signedIn = useSignedIn(slug);
  const me = useMe(slug, signedIn.data === true);
  const branding = useSignInOptions(slug).data?.branding;
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation({
    mutationFn: () => trpc.browser.logout.mutate({ tenantSlug: slug }),
    onSettled: async () => {
      forgetSession(slug);
      forgetPersonData(queryClient, slug);
      queryClient.setQueryData(['session', slug], false);
      await navigate({ to: '/app/$slug/sign-in', params: { slug } });
    },
  });

  if (signedIn.isPending) return <p role="status" className="loading">{t('ui.loading', { ns: 'common' })}</p>;
  if (signedIn.data !== true) return <Navigate to="/app/$slug/sign-in" params={{ slug }} />;
  return (
    <>
      <header className="topbar">
        <span className="brand">
          {branding ? (
            <BrandMark name={branding.displayName} logoUrl={branding.logoUrl} darkLogoUrl={branding.darkLogoUrl} display={branding.brandDisplay} />
          ) : (
            me.data?.tenant.name ?? slug
          )}
        </span>
        <nav aria-label={t('frame.main')}>
          <Link to="/app/$slug/account" params={{ slug }}>{t('frame.account')}</Link>
          {me.data?.role === 'Admin' && <Link to="/app/$slug/admin" params={{ slug }}>{t('frame.adminConsole')}</Link>}
          <button type="button" className="link" onClick={() => signOut.mutate()}>{t('frame.signOut')}</button>
        </nav>
      </header>
      <Outlet />
    </>
  );
}

/** `/app/{slug}/account`: the signed-in user's own account. */
export function AccountPage() {
  const { t } = useTranslation('account');
  usePageTitle(t('title'));
  const slug = useSlug();
  const me = useMe(slug, true);
  // Codes just issued (on enabling TOTP or regenerating), kept here so they outlive the enrolment form.
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  if (me.isPending) return <p role="status" className="loading">{t('ui.loading', { ns: 'common' })}</p>;
  if (me.error) return <ErrorAlert error={toFormError(me.error)} />;
  const user = me.data;
  return (
    <main className="page" id="main">
      <h1>{t('title')}</h1>
      <ProfileEditor slug={slug} user={user} />
      <dl className="facts">
        <dt>{t('facts.email')}</dt>
        <dd>
          {user.email}{' '}
          <span className={user.emailVerified ? 'badge' : 'badge warning'}>{user.emailVerified ? t('facts.verified') : t('facts.notVerified')}</span>
        </dd>
        <dt>{t('facts.role')}</dt>
        <dd>{t(`facts.roles.${user.role}`)}</dd>
        <dt>{t('facts.workspace')}</dt>
        <dd>{user.tenant.name} ({user.tenant.slug})</dd>
        <dt>{t('facts.authenticator')}</dt>
        <dd>{user.totpEnrolled ? t('facts.on') : t('facts.off')}</dd>
        {user.totpEnrolled && (
          <>
            <dt>{t('facts.recoveryCodesLeft')}</dt>
            <dd>{formatNumber(user.recoveryCodesRemaining)}</dd>
          </>
        )}
      </dl>
      {!user.emailVerified && <ResendVerification slug={slug} email={user.email} />}
      {!user.totpEnrolled && <TotpEnrolment slug={slug} onRecoveryCodes={setRecoveryCodes} />}
      {user.totpEnrolled && <TotpOff slug={slug} onOff={() => setRecoveryCodes(null)} />}
      {user.totpEnrolled && <RecoveryCodes slug={slug} codes={recoveryCodes} onRecoveryCodes={setRecoveryCodes} />}
      <Organizations slug={slug} />
      <Passkeys slug={slug} />
      <ChangeEmail slug={slug} passwordSet={user.passwordSet} />
      <ChangePassword slug={slug} />
      <DataExport slug={slug} />
      <SessionControls slug={slug} />
      <DeleteAccount slug={slug} />
    </main>
  );
}

/**
 * The person's profile (PATCH me; docs/api-rules.md "Users and sign-up"): their picture (or initials)
 * and the form to change the display name and the picture's https URL; an emptied field clears it.
 * Applications signing in with scope `profile` receive both as `name` and `picture`.
 */
function ProfileEditor({ slug, user }: { slug: string; user: { email: string; name: string | null; picture: string | null } }) {
  const { t } = useTranslation('account');
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn: (form: FormData) =>
      trpc.me.update.mutate({ tenantSlug: slug, name: formValue(form, 'name') ?? null, picture: formValue(form, 'picture') ?? null }),
    onSuccess: (saved) => {
      queryClient.setQueryData(['me', slug], (old: Record<string, unknown> | undefined) => (old ? { ...old, name: saved.name, picture: saved.picture } : old));
    },
  });
  const error = save.error ? toFormError(save.error) : null;
  return (
    <section aria-labelledby="profile-heading" className="panel">
      <h2 id="profile-heading">{t('profile.title')}</h2>
      <div className="profile-head">
        <Avatar name={user.name} email={user.email} picture={user.picture} size="large" alt={user.picture ? t('profile.pictureAlt') : t('profile.initialsAlt')} />
        <span>{user.name ?? <span className="muted">{t('profile.noName')}</span>}</span>
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        {save.isSuccess && <Notice>{t('profile.saved')}</Notice>}
        <Field label={t('profile.name')} name="name" autoComplete="name" maxLength={128} defaultValue={user.name ?? ''} error={error} hint={t('profile.nameHint')} />
        <Field
          label={t('profile.picture')} name="picture" type="url" inputMode="url" maxLength={2048} defaultValue={user.picture ?? ''} error={error}
          hint={t('profile.pictureHint')} placeholder="https://"
        />
        <button type="submit" disabled={save.isPending}>{t('profile.save')}</button>
      </form>
    </section>
  );
}

function TotpEnrolment({ slug, onRecoveryCodes }: { slug: string; onRecoveryCodes: (codes: string[]) => void }) {
  const { t } = useTranslation('account');
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
      <h2 id="totp-heading">{t('totp.title')}</h2>
      <ErrorAlert error={error} />
      {!enrol.data ? (
        <button type="button" onClick={() => enrol.mutate()} disabled={enrol.isPending}>{t('totp.setUp')}</button>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            verify.mutate(new FormData(e.currentTarget));
          }}
        >
          <TotpSecret secret={enrol.data.secret} otpauthUri={enrol.data.otpauthUri} />
          <Field label={t('totp.code')} name="code" inputMode="numeric" autoComplete="one-time-code" required error={error} />
          <button type="submit" disabled={verify.isPending}>{t('totp.turnOn')}</button>
        </form>
      )}
    </section>
  );
}

/**
 * The organizations the person belongs to, with their organization roles there (GET
 * me/organizations, docs/organizations.md); nothing for a person in none.
 */
function Organizations({ slug }: { slug: string }) {
  const { t, i18n } = useTranslation('account');
  const list = useQuery({ queryKey: ['my-organizations', slug], queryFn: () => trpc.me.organizations.query({ tenantSlug: slug }) });
  if (list.error) return <ErrorAlert error={toFormError(list.error)} />;
  if (!list.data || list.data.items.length === 0) return null;
  const names = new Intl.ListFormat(i18n.language, { type: 'conjunction' });
  return (
    <section aria-labelledby="organizations-heading" className="panel">
      <h2 id="organizations-heading">{t('organizations.title')}</h2>
      <ul aria-label={t('organizations.list')}>
        {list.data.items.map((organization) => (
          <li key={organization.id}>
            <strong>{organization.name}</strong>{' '}
            <span className="muted">
              {organization.roles.length > 0 ? t('organizations.roles', { roles: names.format(organization.roles) }) : t('organizations.noRoles')}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Passkeys of the user (docs/passkeys.md): list, add (browser WebAuthn ceremony), delete. */
function Passkeys({ slug }: { slug: string }) {
  const { t } = useTranslation('account');
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
      <h2 id="passkeys-heading">{t('passkeys.title')}</h2>
      <ErrorAlert error={error} />
      {list.data && list.data.items.length > 0 ? (
        <ul aria-label={t('passkeys.list')}>
          {list.data.items.map((p) => (
            <li key={p.id}>
              {p.name} <span className="muted">{t('passkeys.added', { date: formatDate(p.createdAt) })}{p.lastUsedAt ? t('passkeys.lastUsed', { date: formatDateTime(p.lastUsedAt) }) : ''}</span>{' '}
              <button type="button" className="secondary" onClick={() => remove.mutate(p.id)} disabled={remove.isPending} aria-label={t('passkeys.deleteLabel', { name: p.name })}>
                {t('passkeys.delete')}
              </button>
            </li>
          ))}
        </ul>
      ) : (
        list.data && <p className="muted">{t('passkeys.none')}</p>
      )}
      {add.isSuccess && <Notice>{t('passkeys.addedNotice')}</Notice>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          add.mutate(formValue(new FormData(form), 'passkeyName'), { onSuccess: () => form.reset() });
        }}
      >
        <Field label={t('passkeys.name')} name="passkeyName" error={null} />
        <button type="submit" disabled={add.isPending}>{t('passkeys.add')}</button>
      </form>
    </section>
  );
}

/** The recovery codes of an enrolled user: the ones just issued (shown once) and "generate new codes". */
function RecoveryCodes({ slug, codes, onRecoveryCodes }: { slug: string; codes: string[] | null; onRecoveryCodes: (codes: string[]) => void }) {
  const { t } = useTranslation('account');
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
      <h2 id="recovery-heading">{t('recovery.title')}</h2>
      <ErrorAlert error={regenerate.error ? toFormError(regenerate.error) : null} />
      {codes && <RecoveryCodeList codes={codes} workspace={slug} />}
      <p className="hint">{t('recovery.hint')}</p>
      <button type="button" className="secondary" onClick={() => regenerate.mutate()} disabled={regenerate.isPending}>
        {t('recovery.generate')}
      </button>
    </section>
  );
}

/**
 * Turning the authenticator app off (DELETE mfa/totp), after a confirmation: the secret and the
 * recovery codes go. Needs a sign-in less than 10 minutes old.
 */
function TotpOff({ slug, onOff }: { slug: string; onOff: () => void }) {
  const { t } = useTranslation('account');
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
      <h2 id="totp-off-heading">{t('totp.title')}</h2>
      <ErrorAlert error={turnOff.error ? toFormError(turnOff.error) : null} />
      {!confirming ? (
        <button type="button" className="secondary" onClick={() => setConfirming(true)}>{t('totp.turnOff')}</button>
      ) : (
        <div role="group" aria-label={t('totp.confirmOffLabel')}>
          <p>{t('totp.confirmOff')}</p>
          <button type="button" className="danger" onClick={() => turnOff.mutate()} disabled={turnOff.isPending}>{t('totp.yesTurnOff')}</button>
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>{t('totp.cancel')}</button>
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
  const { t } = useTranslation('account');
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
      <h2 id="email-heading">{t('changeEmail.title')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          change.mutate(new FormData(form), { onSuccess: () => form.reset() });
        }}
      >
        <ErrorAlert error={error} />
        {change.isSuccess && (
          <Notice>{t('changeEmail.sent', { email: change.variables.get('newEmail')?.toString().trim() ?? '' })}</Notice>
        )}
        <Field label={t('changeEmail.newEmail')} name="newEmail" type="email" autoComplete="email" required error={error} />
        {passwordSet && <Field label={t('changeEmail.currentPassword')} name="currentPassword" type="password" autoComplete="current-password" required error={error} />}
        <p className="hint">{t('changeEmail.hint')}</p>
        <button type="submit" disabled={change.isPending}>{t('changeEmail.submit')}</button>
      </form>
    </section>
  );
}

function ChangePassword({ slug }: { slug: string }) {
  const { t } = useTranslation('account');
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
      <h2 id="password-heading">{t('changePassword.title')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          change.mutate(new FormData(form), { onSuccess: () => form.reset() });
        }}
      >
        <ErrorAlert error={error} />
        {change.isSuccess && <Notice>{t('changePassword.done')}</Notice>}
        <Field label={t('changePassword.currentPassword')} name="currentPassword" type="password" autoComplete="current-password" required error={error} />
        <Field label={t('changePassword.newPassword')} name="newPassword" type="password" autoComplete="new-password" required error={error} hint={t('changePassword.hint')} />
        <button type="submit" disabled={change.isPending}>{t('changePassword.submit')}</button>
      </form>
    </section>
  );
}

function DataExport({ slug }: { slug: string }) {
  const { t } = useTranslation('account');
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
      <h2 id="export-heading">{t('data.title')}</h2>
      <ErrorAlert error={exportData.error ? toFormError(exportData.error) : null} />
      <button type="button" className="secondary" onClick={() => exportData.mutate()} disabled={exportData.isPending}>{t('data.download')}</button>
    </section>
  );
}

function SessionControls({ slug }: { slug: string }) {
  const { t } = useTranslation('account');
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
  const methodLabel = useSessionMethodLabel();
  const error = everywhere.error ?? endOne.error ?? sessions.error;
  return (
    <section aria-labelledby="sessions-heading" className="panel">
      <h2 id="sessions-heading">{t('sessions.title')}</h2>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {sessions.data && (
        <ul className="sessions" aria-label={t('sessions.list')}>
          {sessions.data.items.map((session) => (
            <li key={session.id}>
              <strong title={session.userAgent ?? undefined}>{deviceName(session.userAgent, t)}</strong>
              {session.current && <span className="muted">{t('sessions.thisDevice')}</span>}
              <br />
              <span className="hint">
                {session.ip ?? t('sessions.unknownAddress')} · {methodLabel(session.method) ?? t('sessions.unknownMethod')} ·{' '}
                {t('sessions.signedIn', { date: formatDateTime(session.createdAt) })} · {t('sessions.lastUsed', { date: formatDateTime(session.lastUsedAt) })}
              </span>
              {session.applications.length > 0 && (
                <>
                  <br />
                  <span className="hint">{t('sessions.applications', { apps: session.applications.map((app) => app.name ?? app.clientId).join(', ') })}</span>
                </>
              )}
              {!session.current && (
                <>
                  {' '}
                  <button type="button" className="link" onClick={() => endOne.mutate(session.id)} disabled={endOne.isPending}>
                    {t('sessions.signOutDevice')}
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <button type="button" className="secondary" onClick={() => everywhere.mutate()} disabled={everywhere.isPending}>{t('sessions.signOutEverywhere')}</button>
    </section>
  );
}

function DeleteAccount({ slug }: { slug: string }) {
  const { t } = useTranslation('account');
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
      <h2 id="delete-heading">{t('delete.title')}</h2>
      <ErrorAlert error={remove.error ? toFormError(remove.error) : null} />
      {!confirming ? (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>{t('delete.button')}</button>
      ) : (
        <div role="group" aria-label={t('delete.confirmLabel')}>
          <p>{t('delete.confirm')}</p>
          <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>{t('delete.yes')}</button>
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>{t('totp.cancel')}</button>
        </div>
      )}
    </section>
  );
}
