import { useTranslation } from 'react-i18next';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { formatDetails, when } from '../audit-format';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { useConfirm, type ConfirmRequest } from '../confirm';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert, Field, formValue, Notice, useSessionMethodLabel } from '../ui';
import { Avatar } from '../avatar';
import { ActionLabel, EventDetail, EventDetailButton, recordedEmails, useNameParty, type AuditItem } from './admin-events';
import { HeldRoles } from './admin-roles';

type ListedUser = RouterOutputs['users']['list']['items'][number];

/** How many of a user's newest audit events their page shows. */
const USER_AUDIT_LIMIT = 20;

/** The user an admin deleted last in this tab, whom the users page offers to restore. */
export interface RecentlyDeleted {
  id: string;
  email: string;
}

/** Where the console keeps {@link RecentlyDeleted} (the query cache, so it survives the move from a user's page to the list). */
export const recentlyDeletedKey = (slug: string) => ['recently-deleted', slug] as const;

/**
 * "{email} was deleted" with "Restore {email}" (POST users/{userId}/restore, docs/lifecycle.md): shown on
 * the users page after a deletion, until the restore or another deletion. The sessions the deletion
 * ended stay ended; a person who deleted their own account cannot be restored (409, shown as an error).
 */
export function RestoreDeletedUser({ slug, onResult }: { slug: string; onResult: (message: string) => void }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const deleted = useQuery({ queryKey: recentlyDeletedKey(slug), queryFn: () => null as RecentlyDeleted | null, staleTime: Infinity });
  const restore = useMutation({
    mutationFn: (user: RecentlyDeleted) => trpc.users.restore.mutate({ tenantSlug: slug, userId: user.id }),
    onSuccess: async (_data, user) => {
      queryClient.setQueryData(recentlyDeletedKey(slug), null);
      onResult(t('user.restoreDone', { email: user.email }));
      await queryClient.invalidateQueries({ queryKey: ['users', slug] });
    },
  });
  const user = deleted.data;
  if (!user) return null;
  return (
    <div className="panel" role="region" aria-label={t('user.deletedRegion')}>
      <ErrorAlert error={restore.error ? toFormError(restore.error) : null} />
      <p>{t('user.restorable', { email: user.email })}</p>
      <button type="button" className="secondary" onClick={() => restore.mutate(user)} disabled={restore.isPending}>
        {t('user.restore', { email: user.email })}
      </button>
    </div>
  );
}

/** Parses the editor's text as a JSON object; @returns the object, or the reason it is not one. */
function parseCustomData(text: string): { value: Record<string, unknown> } | { problem: 'notJson' | 'notObject' } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch {
    return { problem: 'notJson' };
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { value: parsed as Record<string, unknown> } : { problem: 'notObject' };
}

/**
 * The user's custom data (the workspace's own JSON object about them, at most 4 KiB; the `custom_data`
 * claim, docs/oidc.md) as JSON to edit: checked in the page before it is sent, saved with PATCH
 * users/{userId} `customData` (which replaces it; audited as `UserCustomDataChanged`).
 */
function CustomDataEditor({ slug, userId, customData }: { slug: string; userId: string; customData: Record<string, unknown> }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const id = useId();
  const [text, setText] = useState(() => JSON.stringify(customData, null, 2));
  const [problem, setProblem] = useState<'notJson' | 'notObject' | null>(null);
  const save = useMutation({
    mutationFn: (value: Record<string, unknown>) => trpc.users.update.mutate({ tenantSlug: slug, userId, customData: value }),
    onSuccess: (saved) => {
      queryClient.setQueryData(['user', slug, userId], (old: RouterOutputs['users']['get'] | undefined) => (old ? { ...old, user: saved } : old));
    },
  });
  const error = problem ? { message: t(`user.customData.${problem}`), reason: problem, details: {}, fields: {} } : save.error ? toFormError(save.error) : null;
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{t('user.customData.title')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const parsed = parseCustomData(text);
          if ('problem' in parsed) {
            setProblem(parsed.problem);
            return;
          }
          setProblem(null);
          save.mutate(parsed.value);
        }}
      >
        <ErrorAlert error={error} />
        {save.isSuccess && !problem && <Notice>{t('user.customData.saved')}</Notice>}
        <div className="field">
          <label htmlFor={id}>{t('user.customData.label')}</label>
          <textarea
            id={id} className="mono" rows={6} value={text} spellCheck={false} aria-describedby={`${id}-hint`} aria-invalid={error ? true : undefined}
            onChange={(e) => {
              setText(e.target.value);
              save.reset();
            }}
          />
          <p id={`${id}-hint`} className="hint">{t('user.customData.hint')}</p>
        </div>
        <button type="submit" disabled={save.isPending}>{t('user.customData.save')}</button>
      </form>
    </section>
  );
}

/**
 * The user's name and picture as an admin edits them (PATCH users/{userId} `name`, `picture`; the
 * same rules as the person's own account page; audited `UserProfileUpdated`): an emptied field
 * clears it. Shown beside the picture (or the initials) it saves.
 */
function ProfileEditor({ slug, user }: { slug: string; user: ListedUser }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const id = useId();
  const save = useMutation({
    mutationFn: (form: FormData) =>
      trpc.users.update.mutate({ tenantSlug: slug, userId: user.id, name: formValue(form, 'name') ?? null, picture: formValue(form, 'picture') ?? null }),
    onSuccess: async (saved) => {
      queryClient.setQueryData(['user', slug, user.id], (old: RouterOutputs['users']['get'] | undefined) => (old ? { ...old, user: saved } : old));
      await queryClient.invalidateQueries({ queryKey: ['users', slug] });
    },
  });
  const error = save.error ? toFormError(save.error) : null;
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{t('user.profile.title')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        {save.isSuccess && <Notice>{t('user.profile.saved')}</Notice>}
        <Field label={t('user.profile.name')} name="name" autoComplete="off" maxLength={128} defaultValue={user.name ?? ''} error={error} hint={t('user.profile.nameHint')} />
        <Field
          label={t('user.profile.picture')} name="picture" type="url" inputMode="url" maxLength={2048} defaultValue={user.picture ?? ''} error={error}
          hint={t('user.profile.pictureHint')}
        />
        <button type="submit" disabled={save.isPending}>{t('user.profile.save')}</button>
      </form>
    </section>
  );
}

/**
 * The actions an admin takes on one user on their page (role, suspension, reset, verification,
 * authenticator, deletion; the sessions are listed beside them): each changing one asks first, naming the user and the consequence; each
 * reports its result in words through `onResult` (docs/web.md "Console").
 */
export function UserActions({
  slug, user, onResult, onError, onDeleted,
}: {
  slug: string;
  user: ListedUser;
  onResult: (message: string) => void;
  onError: (error: unknown) => void;
  onDeleted?: () => void;
}) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const action = useMutation({
    mutationFn: async ({ run }: { run: () => Promise<unknown>; done: string; deletes?: boolean }) => run(),
    onSuccess: async (_data, { done, deletes }) => {
      onResult(done);
      await queryClient.invalidateQueries({ queryKey: ['users', slug] });
      await queryClient.invalidateQueries({ queryKey: ['user', slug, user.id] });
      if (deletes) {
        // the users page offers to restore them (RestoreDeletedUser)
        queryClient.setQueryData(recentlyDeletedKey(slug), { id: user.id, email: user.email });
        onDeleted?.();
      }
    },
    onError,
  });
  const confirm = useConfirm();
  const act = (run: () => Promise<unknown>, done: string, confirmation?: ConfirmRequest, deletes?: boolean) => {
    if (!confirmation) return action.mutate({ run, done, deletes });
    void confirm(confirmation).then((ok) => ok && action.mutate({ run, done, deletes }));
  };
  const ids = { tenantSlug: slug, userId: user.id };
  const u = user;
  return (
    <>
      {u.role === 'Member' ? (
        <button
          type="button" className="secondary" aria-label={`${t('user.makeAdmin')}: ${u.email}`}
          onClick={() => act(() => trpc.users.update.mutate({ ...ids, role: 'Admin' }), t('user.makeAdminDone', { email: u.email }), { message: t('user.makeAdminConfirm', { email: u.email }), confirmLabel: t('confirmActions.makeAdmin'), destructive: false })}
        >
          {t('user.makeAdmin')}
        </button>
      ) : (
        <button
          type="button" className="secondary" aria-label={`${t('user.makeMember')}: ${u.email}`}
          onClick={() => act(() => trpc.users.update.mutate({ ...ids, role: 'Member' }), t('user.makeMemberDone', { email: u.email }), { message: t('user.makeMemberConfirm', { email: u.email }), confirmLabel: t('confirmActions.makeMember'), destructive: false })}
        >
          {t('user.makeMember')}
        </button>
      )}
      {u.status === 'Suspended' ? (
        <button
          type="button" className="secondary" aria-label={`${t('user.reactivate')} ${u.email}`}
          onClick={() => act(() => trpc.users.update.mutate({ ...ids, status: 'Active' }), t('user.reactivateDone', { email: u.email }))}
        >
          {t('user.reactivate')}
        </button>
      ) : (
        u.status === 'Active' && (
          <button
            type="button" className="danger" aria-label={`${t('user.suspend')} ${u.email}`}
            onClick={() => act(() => trpc.users.update.mutate({ ...ids, status: 'Suspended' }), t('user.suspendDone', { email: u.email }), { message: t('user.suspendConfirm', { email: u.email }), confirmLabel: t('confirmActions.suspendUser') })}
          >
            {t('user.suspend')}
          </button>
        )
      )}
      <button
        type="button" className="secondary" aria-label={`${t('user.sendReset')}: ${u.email}`}
        onClick={() => act(() => trpc.users.sendPasswordReset.mutate(ids), t('user.sendResetDone', { email: u.email }))}
      >
        {t('user.sendReset')}
      </button>
      {!u.emailVerified && (
        <button
          type="button" className="secondary" aria-label={`${t('user.resendVerification')}: ${u.email}`}
          onClick={() => act(() => trpc.users.sendVerificationMail.mutate(ids), t('user.resendVerificationDone', { email: u.email }))}
        >
          {t('user.resendVerification')}
        </button>
      )}
      {u.totpEnrolled && (
        <button
          type="button" className="secondary" aria-label={t('user.disableTotpLabel', { email: u.email })}
          onClick={() => act(() => trpc.users.disableTotp.mutate(ids), t('user.disableTotpDone', { email: u.email }), { message: t('user.disableTotpConfirm', { email: u.email }), confirmLabel: t('confirmActions.disableTotp') })}
        >
          {t('user.disableTotp')}
        </button>
      )}
      <button
        type="button" className="danger" aria-label={`${t('user.delete')} ${u.email}`}
        onClick={() => act(() => trpc.users.delete.mutate(ids), t('user.deleteDone', { email: u.email }), { message: t('user.deleteConfirm', { email: u.email }), confirmLabel: t('confirmActions.deleteUser') }, true)}
      >
        {t('user.delete')}
      </button>
    </>
  );
}

/** One user's live sessions (GET users/{userId}/sessions), each with "End session" (docs/api-rules.md "Sessions of a user"). */
export function UserSessions({ slug, user, onClose }: { slug: string; user: { id: string; email: string }; onClose?: () => void }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const sessions = useQuery({
    queryKey: ['user-sessions', slug, user.id],
    queryFn: () => trpc.users.listSessions.query({ tenantSlug: slug, userId: user.id }),
  });
  const end = useMutation({
    mutationFn: (sessionId: string) => trpc.users.revokeSession.mutate({ tenantSlug: slug, userId: user.id, sessionId }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['user-sessions', slug, user.id] }),
  });
  const methodLabel = useSessionMethodLabel();
  const error = sessions.error ?? end.error;
  return (
    <section aria-labelledby="user-sessions-heading" className="panel">
      <h2 id="user-sessions-heading">{t('user.sessionsOf', { email: user.email })}</h2>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {sessions.data && sessions.data.items.length === 0 && <p className="muted">{t('user.noSessions')}</p>}
      {sessions.data && sessions.data.items.length > 0 && (
        <div className="table-wrap">
          <table className="cards">
            <thead>
              <tr><th scope="col">{t('user.device')}</th><th scope="col">{t('user.address')}</th><th scope="col">{t('user.method')}</th><th scope="col">{t('user.signedIn')}</th><th scope="col">{t('user.lastUsed')}</th><th scope="col">{t('user.applications')}</th><th scope="col">{t('table.actions')}</th></tr>
            </thead>
            <tbody>
              {sessions.data.items.map((session) => (
                <tr key={session.id}>
                  <td role="cell">{session.userAgent ?? '—'}{session.current ? t('user.you') : ''}</td>
                  <td role="cell" data-label={t('user.address')}>{session.ip ?? '—'}</td>
                  <td role="cell" data-label={t('user.method')}>{methodLabel(session.method) ?? '—'}</td>
                  <td role="cell" data-label={t('user.signedIn')}>{when(session.createdAt)}</td>
                  <td role="cell" data-label={t('user.lastUsed')}>{when(session.lastUsedAt)}</td>
                  <td role="cell" data-label={t('user.applications')}>
                    {session.applications.length > 0 ? session.applications.map((app) => app.name ?? app.clientId).join(', ') : t('user.noApplications')}
                  </td>
                  <td role="cell" className="actions">
                    <button type="button" className="danger" onClick={() => end.mutate(session.id)} disabled={end.isPending}>{t('user.endSession')}</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {onClose && <button type="button" className="link" onClick={onClose}>{t('user.close')}</button>}
    </section>
  );
}

/**
 * `/app/{slug}/admin/users/{userId}`: one user: who they are (status, role, created, last sign-in,
 * verification), their factors (authenticator, passkeys, recovery codes left), provider links,
 * sessions, newest audit events, and every admin action (docs/web.md "Console").
 */
export function UserPage() {
  const { t } = useTranslation('admin');
  const slug = useSlug();
  const { userId } = useParams({ from: '/app/$slug/signed-in/admin/users/$userId' });
  const navigate = useNavigate();
  const [result, setResult] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const profile = useQuery({ queryKey: ['user', slug, userId], queryFn: () => trpc.users.get.query({ tenantSlug: slug, userId }) });
  const events = useQuery({
    queryKey: ['audit', slug, { userId }, 'user-page'],
    queryFn: () => trpc.audit.list.query({ tenantSlug: slug, userId, limit: USER_AUDIT_LIMIT }),
  });
  const user = profile.data?.user;
  // the page knows one user: the others an event names are shown by kind and short id (the audit page names everyone)
  const nameParty = useNameParty({ emailOf: new Map(user ? [[user.id, user.email]] : []), complete: false, recorded: recordedEmails(events.data?.items ?? []) });
  const [shownEvent, setShownEvent] = useState<AuditItem | null>(null);
  usePageTitle(user ? user.email : t('user.title'));
  const error = profile.error ?? actionError ?? events.error;
  return (
    <main className="page" id="main">
      <p><Link to="/app/$slug/admin/users" params={{ slug }}>{t('user.allUsers')}</Link></p>
      <h1>{user ? user.email : t('user.title')}</h1>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {result && <Notice>{result}</Notice>}
      {profile.data && user && (
        <>
          <div className="profile-head">
            <Avatar
              name={user.name} email={user.email} picture={user.picture} size="large"
              alt={user.picture ? t('user.profile.pictureAlt', { email: user.email }) : t('user.profile.initialsAlt', { email: user.email })}
            />
            <span>{user.name ?? <span className="muted">{t('user.profile.noName')}</span>}</span>
          </div>
          <dl className="facts">
            <dt>{t('user.status')}</dt><dd>{t(`values.statuses.${user.status}`)}</dd>
            <dt>{t('user.role')}</dt><dd>{t(`values.roles.${user.role}`)}</dd>
            <dt>{t('user.created')}</dt><dd>{when(user.createdAt)}</dd>
            <dt>{t('user.lastSignIn')}</dt><dd>{user.lastLoginAt === user.createdAt ? t('user.notSinceSignUp') : when(user.lastLoginAt)}</dd>
            <dt>{t('user.email')}</dt><dd>{profile.data.emailVerifiedAt ? t('user.verifiedAt', { date: when(profile.data.emailVerifiedAt) }) : t('user.notVerified')}</dd>
            <dt>{t('user.authenticator')}</dt><dd>{user.totpEnrolled ? t('values.on') : t('values.off')}</dd>
            <dt>{t('user.recoveryCodesLeft')}</dt><dd>{profile.data.recoveryCodesRemaining}</dd>
          </dl>
          <div className="actions" role="group" aria-label={t('user.actionsOn', { email: user.email })}>
            <UserActions
              slug={slug} user={user}
              onResult={(message) => { setActionError(null); setResult(message); }}
              onError={(err) => { setResult(null); setActionError(err); }}
              onDeleted={() => navigate({ to: '/app/$slug/admin/users', params: { slug } })}
            />
          </div>
          <ProfileEditor key={user.id} slug={slug} user={user} />
          <HeldRoles slug={slug} holder={{ kind: 'user', id: user.id, label: user.email }} />
          <CustomDataEditor key={user.id} slug={slug} userId={user.id} customData={user.customData} />
          <section aria-labelledby="passkeys-heading">
            <h2 id="passkeys-heading">{t('user.passkeys')}</h2>
            {profile.data.passkeys.length === 0 ? <p className="muted">{t('user.noPasskeys')}</p> : (
              <ul>
                {profile.data.passkeys.map((p) => (
                  <li key={p.id}>{t('user.passkeyLine', { name: p.name, added: when(p.createdAt), used: when(p.lastUsedAt) })}{p.backedUp ? t('user.synced') : ''}</li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="links-heading">
            <h2 id="links-heading">{t('user.providerLinks')}</h2>
            {profile.data.providerLinks.length === 0 ? <p className="muted">{t('user.noProviderLinks')}</p> : (
              <ul>
                {profile.data.providerLinks.map((l) => (
                  <li key={`${l.issuer} ${l.subject}`}>{t('user.linkLine', { issuer: l.issuer, as: l.email ? t('user.linkAs', { email: l.email }) : '', linked: when(l.createdAt), used: when(l.lastLoginAt) })}</li>
                ))}
              </ul>
            )}
          </section>
          <UserSessions slug={slug} user={user} />
          <section aria-labelledby="user-events-heading">
            <h2 id="user-events-heading">{t('user.recentEvents')}</h2>
            <div className="table-wrap">
              <table className="cards">
                <thead><tr><th scope="col">{t('table.time')}</th><th scope="col">{t('table.action')}</th><th scope="col">{t('table.details')}</th><th scope="col">{t('table.actions')}</th></tr></thead>
                <tbody>
                  {(events.data?.items ?? []).map((item) => (
                    <tr key={item.id}>
                      <td role="cell">{when(item.createdAt)}</td>
                      <td role="cell" data-label={t('table.action')}><ActionLabel action={item.action} /></td>
                      <td role="cell" data-label={t('table.details')} className="details">{formatDetails(item.details)}</td>
                      <td role="cell" className="actions"><EventDetailButton event={item} onOpen={() => setShownEvent(item)} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Link to="/app/$slug/admin/audit" params={{ slug }} search={{ userId }}>{t('user.allEventsOf', { email: user.email })}</Link>
            {shownEvent && <EventDetail event={shownEvent} nameParty={nameParty} slug={slug} onClose={() => setShownEvent(null)} />}
          </section>
        </>
      )}
    </main>
  );
}
