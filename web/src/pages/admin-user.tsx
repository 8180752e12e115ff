import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { formatDetails, when } from '../audit-format';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert, Notice } from '../ui';

type ListedUser = RouterOutputs['users']['list']['items'][number];

/** How many of a user's newest audit events their page shows. */
const USER_AUDIT_LIMIT = 20;

/**
 * The actions an admin takes on one user (role, suspension, reset, verification, authenticator,
 * sessions, deletion): each changing one asks first, naming the user and the consequence; each
 * reports its result in words through `onResult` (docs/web.md "Console").
 */
export function UserActions({
  slug, user, onResult, onError, onSessions, onDeleted,
}: {
  slug: string;
  user: ListedUser;
  onResult: (message: string) => void;
  onError: (error: unknown) => void;
  /** Shows the user's sessions; omitted where they are already on screen. */
  onSessions?: () => void;
  onDeleted?: () => void;
}) {
  const queryClient = useQueryClient();
  const action = useMutation({
    mutationFn: async ({ run }: { run: () => Promise<unknown>; done: string; deletes?: boolean }) => run(),
    onSuccess: async (_data, { done, deletes }) => {
      onResult(done);
      await queryClient.invalidateQueries({ queryKey: ['users', slug] });
      await queryClient.invalidateQueries({ queryKey: ['user', slug, user.id] });
      if (deletes) onDeleted?.();
    },
    onError,
  });
  const act = (run: () => Promise<unknown>, done: string, confirmation?: string, deletes?: boolean) => {
    if (confirmation && !window.confirm(confirmation)) return;
    action.mutate({ run, done, deletes });
  };
  const ids = { tenantSlug: slug, userId: user.id };
  const u = user;
  return (
    <>
      {u.role === 'Member' ? (
        <button
          type="button" className="secondary" aria-label={`Make Admin: ${u.email}`}
          onClick={() => act(() => trpc.users.update.mutate({ ...ids, role: 'Admin' }), `${u.email} is now an Admin.`, `Make ${u.email} an Admin of this workspace?`)}
        >
          Make Admin
        </button>
      ) : (
        <button
          type="button" className="secondary" aria-label={`Make Member: ${u.email}`}
          onClick={() => act(() => trpc.users.update.mutate({ ...ids, role: 'Member' }), `${u.email} is now a Member.`, `Make ${u.email} a Member (no administration)?`)}
        >
          Make Member
        </button>
      )}
      {u.status === 'Suspended' ? (
        <button
          type="button" className="secondary" aria-label={`Reactivate ${u.email}`}
          onClick={() => act(() => trpc.users.update.mutate({ ...ids, status: 'Active' }), `${u.email} can sign in again.`)}
        >
          Reactivate
        </button>
      ) : (
        u.status === 'Active' && (
          <button
            type="button" className="danger" aria-label={`Suspend ${u.email}`}
            onClick={() => act(() => trpc.users.update.mutate({ ...ids, status: 'Suspended' }), `${u.email} is suspended; their sessions have ended.`, `Suspend ${u.email}? Their sessions end at once and they cannot sign in until reactivated.`)}
          >
            Suspend
          </button>
        )
      )}
      <button
        type="button" className="secondary" aria-label={`Send reset: ${u.email}`}
        onClick={() => act(() => trpc.users.sendPasswordReset.mutate(ids), `A password-reset link was mailed to ${u.email}.`)}
      >
        Send reset
      </button>
      {!u.emailVerified && (
        <button
          type="button" className="secondary" aria-label={`Resend verification: ${u.email}`}
          onClick={() => act(() => trpc.users.sendVerificationMail.mutate(ids), `A new verification link was mailed to ${u.email}.`)}
        >
          Resend verification
        </button>
      )}
      {u.totpEnrolled && (
        <button
          type="button" className="secondary" aria-label={`Disable authenticator of ${u.email}`}
          onClick={() => act(() => trpc.users.disableTotp.mutate(ids), `The authenticator of ${u.email} is off.`, `Turn off the authenticator of ${u.email}?`)}
        >
          Disable authenticator
        </button>
      )}
      {onSessions && (
        <button type="button" className="secondary" aria-label={`Sessions of ${u.email}`} onClick={onSessions}>
          Sessions
        </button>
      )}
      <button
        type="button" className="danger" aria-label={`Delete ${u.email}`}
        onClick={() => act(() => trpc.users.delete.mutate(ids), `${u.email} was deleted; an admin can restore them for a while.`, `Delete ${u.email}? Their sessions end at once.`, true)}
      >
        Delete
      </button>
    </>
  );
}

/** One user's live sessions (GET users/{userId}/sessions), each with "End session" (docs/api-rules.md "Sessions of a user"). */
export function UserSessions({ slug, user, onClose }: { slug: string; user: { id: string; email: string }; onClose?: () => void }) {
  const queryClient = useQueryClient();
  const sessions = useQuery({
    queryKey: ['user-sessions', slug, user.id],
    queryFn: () => trpc.users.listSessions.query({ tenantSlug: slug, userId: user.id }),
  });
  const end = useMutation({
    mutationFn: (sessionId: string) => trpc.users.revokeSession.mutate({ tenantSlug: slug, userId: user.id, sessionId }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['user-sessions', slug, user.id] }),
  });
  const error = sessions.error ?? end.error;
  return (
    <section aria-labelledby="user-sessions-heading" className="panel">
      <h2 id="user-sessions-heading">Sessions of {user.email}</h2>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {sessions.data && sessions.data.items.length === 0 && <p className="muted">No live sessions.</p>}
      {sessions.data && sessions.data.items.length > 0 && (
        <div className="table-wrap">
          <table className="cards">
            <thead>
              <tr><th scope="col">Device</th><th scope="col">Address</th><th scope="col">Method</th><th scope="col">Signed in</th><th scope="col">Last used</th><th scope="col">Actions</th></tr>
            </thead>
            <tbody>
              {sessions.data.items.map((session) => (
                <tr key={session.id}>
                  <td role="cell">{session.userAgent ?? '—'}{session.current ? ' (you)' : ''}</td>
                  <td role="cell" data-label="Address">{session.ip ?? '—'}</td>
                  <td role="cell" data-label="Method">{session.method ?? '—'}</td>
                  <td role="cell" data-label="Signed in">{when(session.createdAt)}</td>
                  <td role="cell" data-label="Last used">{when(session.lastUsedAt)}</td>
                  <td role="cell" className="actions">
                    <button type="button" className="danger" onClick={() => end.mutate(session.id)} disabled={end.isPending}>End session</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {onClose && <button type="button" className="link" onClick={onClose}>Close</button>}
    </section>
  );
}

/**
 * `/app/{slug}/admin/users/{userId}`: one user: who they are (status, role, created, last sign-in,
 * verification), their factors (authenticator, passkeys, recovery codes left), provider links,
 * sessions, newest audit events, and every admin action (docs/web.md "Console").
 */
export function UserPage() {
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
  usePageTitle(user ? user.email : 'User');
  const error = profile.error ?? actionError ?? events.error;
  return (
    <main className="page" id="main">
      <p><Link to="/app/$slug/admin/users" params={{ slug }}>← All users</Link></p>
      <h1>{user ? user.email : 'User'}</h1>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {result && <Notice>{result}</Notice>}
      {profile.data && user && (
        <>
          <dl className="facts">
            <dt>Status</dt><dd>{user.status}</dd>
            <dt>Role</dt><dd>{user.role}</dd>
            <dt>Created</dt><dd>{when(user.createdAt)}</dd>
            <dt>Last sign-in</dt><dd>{user.lastLoginAt === user.createdAt ? 'Not since sign-up' : when(user.lastLoginAt)}</dd>
            <dt>Email</dt><dd>{profile.data.emailVerifiedAt ? `Verified ${when(profile.data.emailVerifiedAt)}` : 'Not verified yet'}</dd>
            <dt>Authenticator app</dt><dd>{user.totpEnrolled ? 'On' : 'Off'}</dd>
            <dt>Recovery codes left</dt><dd>{profile.data.recoveryCodesRemaining}</dd>
          </dl>
          <div className="actions" role="group" aria-label={`Actions on ${user.email}`}>
            <UserActions
              slug={slug} user={user}
              onResult={(message) => { setActionError(null); setResult(message); }}
              onError={(err) => { setResult(null); setActionError(err); }}
              onDeleted={() => navigate({ to: '/app/$slug/admin/users', params: { slug } })}
            />
          </div>
          <section aria-labelledby="passkeys-heading">
            <h2 id="passkeys-heading">Passkeys</h2>
            {profile.data.passkeys.length === 0 ? <p className="muted">No passkeys.</p> : (
              <ul>
                {profile.data.passkeys.map((p) => (
                  <li key={p.id}>{p.name}: added {when(p.createdAt)}, last used {when(p.lastUsedAt)}{p.backedUp ? ' (synced)' : ''}</li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="links-heading">
            <h2 id="links-heading">Provider links</h2>
            {profile.data.providerLinks.length === 0 ? <p className="muted">Not linked to the workspace's provider.</p> : (
              <ul>
                {profile.data.providerLinks.map((l) => (
                  <li key={`${l.issuer} ${l.subject}`}>{l.issuer}{l.email ? ` as ${l.email}` : ''}: linked {when(l.createdAt)}, last used {when(l.lastLoginAt)}</li>
                ))}
              </ul>
            )}
          </section>
          <UserSessions slug={slug} user={user} />
          <section aria-labelledby="user-events-heading">
            <h2 id="user-events-heading">Recent events</h2>
            <div className="table-wrap">
              <table className="cards">
                <thead><tr><th scope="col">Time</th><th scope="col">Action</th><th scope="col">Details</th></tr></thead>
                <tbody>
                  {(events.data?.items ?? []).map((item) => (
                    <tr key={item.id}>
                      <td role="cell">{when(item.createdAt)}</td>
                      <td role="cell" data-label="Action">{item.action}</td>
                      <td role="cell" data-label="Details" className="details">{formatDetails(item.details)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Link to="/app/$slug/admin/audit" params={{ slug }} search={{ userId }}>All events of {user.email}</Link>
          </section>
        </>
      )}
    </main>
  );
}
