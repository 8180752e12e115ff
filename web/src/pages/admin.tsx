import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useRouterState, useSearch } from '@tanstack/react-router';
import { useDeferredValue, useEffect, useId, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { LOCALE_NAMES, LOCALES, type Locale } from '../../../src/lib/locales.js';
import { downloadFile, toFormError, trpc, type RouterInputs, type RouterOutputs } from '../api';
import { formatDetails, when } from '../audit-format';
import { useConfirm } from '../confirm';
import { useMe, usePageTitle, useSlug } from '../hooks';
import { BrandingSection } from './admin-branding';
import { PoliciesSection } from './admin-policies';
import { ActionLabel, ActionSelect, EventDetail, EventDetailButton, PartyText, recordedEmails, useNameParty, type AuditItem } from './admin-events';
import { RestoreDeletedUser } from './admin-user';
import { Avatar } from '../avatar';
import { formatDate, formatDateTime } from '../i18n';
import { Checkbox, CopyField, ErrorAlert, Field, formValue, Notice, Select } from '../ui';

type Role = RouterInputs['invites']['create']['role'] & string;
type Environment = RouterInputs['apiKeys']['create']['environment'];
type MfaPolicy = RouterOutputs['tenant']['get']['mfaPolicy'];
type AuditAction = NonNullable<RouterInputs['audit']['list']['action']>;

const ROLES: readonly Role[] = ['Member', 'Admin'];
type UserStatus = NonNullable<RouterInputs['users']['list']['status']>;
const USER_STATUSES: readonly UserStatus[] = ['Active', 'Pending', 'Suspended'];
const ENVIRONMENTS: readonly Environment[] = ['live', 'test'];
const MFA_POLICIES: readonly MfaPolicy[] = ['Disabled', 'Optional', 'Required'];
type SignupPolicy = RouterOutputs['tenant']['get']['signupPolicy'];
const SIGNUP_POLICIES: readonly SignupPolicy[] = ['Open', 'Domains', 'InviteOnly'];
/** Page sizes offered on the users page (the API allows 1 to 1000). */
const USERS_PAGE_SIZES = [10, 50, 100] as const;


/**
 * `/app/{slug}/admin/*`: the console's navigation; a Member sees a 403 page instead. On a narrow
 * screen (below 48rem) the links fold behind a "Menu" button (aria-expanded, aria-controls), which
 * folds them again once a page is chosen; on a wide one they are always shown and the button is not.
 */
export function AdminLayout() {
  const { t } = useTranslation('admin');
  const slug = useSlug();
  const me = useMe(slug, true);
  const linksId = useId();
  const [menuOpen, setMenuOpen] = useState(false);
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  useEffect(() => setMenuOpen(false), [pathname]);
  if (me.isPending) return <p role="status" className="loading">{t('ui.loading', { ns: 'common' })}</p>;
  if (me.data?.role !== 'Admin') {
    return (
      <main className="page" id="main">
        <h1>{t('layout.adminsOnly')}</h1>
        <p>{t('layout.adminsOnlyText')}</p>
        <Link to="/app/$slug/account" params={{ slug }}>{t('layout.backToAccount')}</Link>
      </main>
    );
  }
  return (
    <div className="admin">
      <nav aria-label={t('layout.nav')} className="tabs">
        <button type="button" className="secondary menu-toggle" aria-expanded={menuOpen} aria-controls={linksId} onClick={() => setMenuOpen(!menuOpen)}>
          {t('layout.menu')}
        </button>
        <div id={linksId} className={menuOpen ? 'tab-links open' : 'tab-links'}>
          <Link to="/app/$slug/admin" params={{ slug }} activeOptions={{ exact: true }}>{t('layout.activity')}</Link>
          <Link to="/app/$slug/admin/users" params={{ slug }}>{t('layout.users')}</Link>
          <Link to="/app/$slug/admin/invites" params={{ slug }}>{t('layout.invites')}</Link>
          <Link to="/app/$slug/admin/api-keys" params={{ slug }}>{t('layout.apiKeys')}</Link>
          <Link to="/app/$slug/admin/applications" params={{ slug }}>{t('layout.applications')}</Link>
          <Link to="/app/$slug/admin/api-resources" params={{ slug }}>{t('layout.apiResources')}</Link>
          <Link to="/app/$slug/admin/roles" params={{ slug }}>{t('layout.roles')}</Link>
          <Link to="/app/$slug/admin/organizations" params={{ slug }}>{t('layout.organizations')}</Link>
          <Link to="/app/$slug/admin/sso" params={{ slug }}>{t('layout.sso')}</Link>
          <Link to="/app/$slug/admin/webhooks" params={{ slug }}>{t('layout.webhooks')}</Link>
          <Link to="/app/$slug/admin/settings" params={{ slug }}>{t('layout.settings')}</Link>
          <Link to="/app/$slug/admin/audit" params={{ slug }}>{t('layout.audit')}</Link>
        </div>
      </nav>
      <Outlet />
    </div>
  );
}

/**
 * Users: list page by page ("Load more", GET users `limit` + `cursor`) with role, status, whether the
 * address is verified, authenticator, created and last sign-in (days in the page language); each
 * person's email (and name and picture when set) links to their page, where every action is. "Import
 * users" opens the import page (./admin-import.tsx), "Export users" downloads GET users/export.
 */
export function UsersPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('users.title'));
  const slug = useSlug();
  const pageSizeId = useId();
  const searchId = useId();
  const roleId = useId();
  const statusId = useId();
  const [pageSize, setPageSize] = useState<number>(USERS_PAGE_SIZES[1]);
  const [search, setSearch] = useState('');
  const [role, setRole] = useState<Role | ''>('');
  const [status, setStatus] = useState<UserStatus | ''>('');
  const deferredSearch = useDeferredValue(search.trim());
  const [result, setResult] = useState<string | null>(null);
  // GET users paging (limit + cursor, nextCursor; docs/api-rules.md): pages are appended by "Load more";
  // search (part of the email), role and status filter on the server
  const users = useInfiniteQuery({
    queryKey: ['users', slug, pageSize, deferredSearch, role, status],
    queryFn: ({ pageParam }) =>
      trpc.users.list.query({
        tenantSlug: slug, limit: pageSize, cursor: pageParam,
        search: deferredSearch || undefined, role: role || undefined, status: status || undefined,
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
  });
  // GET users/export (docs/import.md "Exporting"): NDJSON, fetched with the access token and saved as a file
  const exportUsers = useMutation({ mutationFn: () => downloadFile(slug, `/v1/${encodeURIComponent(slug)}/users/export`) });
  const error = users.error ?? exportUsers.error;
  const items = users.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <main className="page" id="main">
      <h1>{t('users.title')}</h1>
      <div className="page-actions" role="group" aria-label={t('users.moveUsers')}>
        <Link className="button-link" to="/app/$slug/admin/users/import" params={{ slug }}>{t('users.import')}</Link>
        <button type="button" className="secondary" onClick={() => exportUsers.mutate()} disabled={exportUsers.isPending}>{t('users.export')}</button>
      </div>
      <AddUser slug={slug} />
      <ErrorAlert error={error ? toFormError(error) : null} />
      {result && <Notice>{result}</Notice>}
      <RestoreDeletedUser slug={slug} onResult={setResult} />
      <div className="filters">
        <div className="field">
          <label htmlFor={searchId}>{t('users.search')}</label>
          <input id={searchId} type="search" value={search} onChange={(e) => setSearch(e.target.value)} maxLength={254} />
        </div>
        <div className="field">
          <label htmlFor={roleId}>{t('users.role')}</label>
          <select id={roleId} value={role} onChange={(e) => setRole(e.target.value as Role | '')}>
            <option value="">{t('users.anyRole')}</option>
            {ROLES.map((r) => <option key={r} value={r}>{t(`values.roles.${r}`)}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor={statusId}>{t('users.status')}</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.target.value as UserStatus | '')}>
            <option value="">{t('users.anyStatus')}</option>
            {USER_STATUSES.map((st) => <option key={st} value={st}>{t(`values.statuses.${st}`)}</option>)}
          </select>
        </div>
        <div className="field page-size">
          <label htmlFor={pageSizeId}>{t('users.perPage')}</label>
          <select id={pageSizeId} value={pageSize} onChange={(e) => setPageSize(Number(e.target.value))}>
            {USERS_PAGE_SIZES.map((size) => (
              <option key={size} value={size}>{size}</option>
            ))}
          </select>
        </div>
      </div>
      <div className="table-wrap">
        <table className="cards">
          <thead>
            <tr>
              <th scope="col">{t('table.user')}</th><th scope="col">{t('table.role')}</th><th scope="col">{t('table.status')}</th>
              <th scope="col">{t('table.verified')}</th><th scope="col">{t('table.authenticator')}</th><th scope="col">{t('table.created')}</th>
              <th scope="col">{t('table.lastSignIn')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((u) => (
              <tr key={u.id}>
                <td role="cell"><UserCell slug={slug} user={u} /></td>
                <td role="cell" data-label={t('table.role')}>{t(`values.roles.${u.role}`)}</td>
                <td role="cell" data-label={t('table.status')}>{t(`values.statuses.${u.status}`)}</td>
                <td role="cell" data-label={t('table.verified')}>{u.emailVerified ? t('values.yes') : t('values.no')}</td>
                <td role="cell" data-label={t('table.authenticator')}>{u.totpEnrolled ? t('values.on') : t('values.off')}</td>
                <td role="cell" data-label={t('table.created')}><Day iso={u.createdAt} /></td>
                <td role="cell" data-label={t('table.lastSignIn')}>
                  {/* lastLoginAt is createdAt for the sign-up's own sign-in, and its fallback after an import (docs/decisions.md "Users") */}
                  {u.lastLoginAt === u.createdAt ? t('user.notSinceSignUp') : <Day iso={u.lastLoginAt} />}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p role="status" className="muted">
        {users.isSuccess && (users.hasNextPage ? t('users.more', { count: items.length }) : t('users.all', { count: items.length }))}
      </p>
      {users.hasNextPage && (
        <button type="button" className="secondary" onClick={() => users.fetchNextPage()} disabled={users.isFetchingNextPage}>
          {t('users.loadMore')}
        </button>
      )}
    </main>
  );
}

/** A day in the page language, the full time on hover. */
function Day({ iso }: { iso: string }) {
  return <time dateTime={iso} title={formatDateTime(iso)}>{formatDate(iso)}</time>;
}

/**
 * A person in the users list: the link to their page named by their email, with their display name
 * and small picture (or initials) beside it when they have a name or picture; without either, the
 * address alone (the cell's text is then exactly the address).
 */
function UserCell({ slug, user }: { slug: string; user: RouterOutputs['users']['list']['items'][number] }) {
  const link = <Link to="/app/$slug/admin/users/$userId" params={{ slug, userId: user.id }}>{user.email}</Link>;
  if (user.name === null && user.picture === null) return link;
  return (
    <span className="person">
      <Avatar name={user.name} email={user.email} picture={user.picture} />
      <span className="person-text">
        {user.name !== null && <span>{user.name}</span>}
        {link}
      </span>
    </span>
  );
}

/**
 * "Add user" (POST users; docs/api-rules.md "Users and sign-up"): email, role, an optional password
 * (without one the person is mailed a link to set it) and whether the address counts as verified.
 * The form empties after a user is added.
 */
function AddUser({ slug }: { slug: string }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: (input: { form: FormData; element: HTMLFormElement }) =>
      trpc.users.create.mutate({
        tenantSlug: slug,
        email: formValue(input.form, 'email') ?? '',
        role: (formValue(input.form, 'role') ?? 'Member') as Role,
        password: formValue(input.form, 'password'),
        emailVerified: input.form.get('emailVerified') === 'on',
      }),
    onSuccess: (_data, input) => {
      input.element.reset();
      void queryClient.invalidateQueries({ queryKey: ['users', slug] });
    },
  });
  const error = create.error ? toFormError(create.error) : null;
  const added = create.data?.user;
  return (
    <section aria-labelledby="add-user" className="panel">
      <h2 id="add-user">{t('users.add')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
        }}
      >
        <ErrorAlert error={error} />
        {added && <Notice>{create.variables?.form.get('password') ? t('users.added', { email: added.email }) : t('users.addedMailed', { email: added.email })}</Notice>}
        <Field label={t('users.email')} name="email" type="email" autoComplete="off" required error={error} />
        <Select label={t('users.newRole')} name="role" options={ROLES} defaultValue="Member" optionLabel={(r) => t(`values.roles.${r as Role}`)} />
        <Field label={t('users.password')} name="password" type="password" autoComplete="new-password" error={error} hint={t('users.passwordHint')} />
        <Checkbox label={t('users.emailVerified')} name="emailVerified" />
        <button type="submit" disabled={create.isPending}>{t('users.addButton')}</button>
      </form>
    </section>
  );
}

/** Invites: create (role, lifetime), list with the accepted/revoked filters, revoke, copy link. */
export function InvitesPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('invites.title'));
  const slug = useSlug();
  const queryClient = useQueryClient();
  const [includeAccepted, setIncludeAccepted] = useState(false);
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const invites = useQuery({
    queryKey: ['invites', slug, includeAccepted, includeRevoked],
    queryFn: () => trpc.invites.list.query({ tenantSlug: slug, includeAccepted, includeRevoked }),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['invites', slug] });
  const create = useMutation({
    mutationFn: ({ form }: { form: FormData; element: HTMLFormElement }) => {
      const hours = Number(formValue(form, 'ttlHours') ?? '0');
      return trpc.invites.create.mutate({
        tenantSlug: slug,
        email: formValue(form, 'email') ?? '',
        role: (formValue(form, 'role') ?? 'Member') as Role,
        ttlSeconds: hours > 0 ? Math.round(hours * 3600) : undefined,
      });
    },
    onSuccess: (_data, { element }) => {
      element.reset();
      return refresh();
    },
  });
  const revoke = useMutation({ mutationFn: (id: string) => trpc.invites.revoke.mutate({ tenantSlug: slug, id }), onSuccess: refresh });
  const resend = useMutation({ mutationFn: (id: string) => trpc.invites.resend.mutate({ tenantSlug: slug, id }), onSuccess: refresh });
  const [copied, setCopied] = useState(false);
  const error = create.error ? toFormError(create.error) : null;
  const link = create.data ? `${window.location.origin}/app/${slug}/accept-invite?token=${encodeURIComponent(create.data.token)}` : null;
  return (
    <main className="page" id="main">
      <h1>{t('invites.title')}</h1>
      <section aria-labelledby="new-invite" className="panel">
        <h2 id="new-invite">{t('invites.new')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setCopied(false);
            create.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
          }}
        >
          <ErrorAlert error={error} />
          <Field label={t('invites.email')} name="email" type="email" required error={error} />
          <Select label={t('invites.role')} name="role" options={ROLES} defaultValue="Member" optionLabel={(r) => t(`values.roles.${r as Role}`)} />
          <Field label={t('invites.validFor')} name="ttlHours" type="number" min={1} max={720} error={error} hint={t('invites.validForHint')} />
          <button type="submit" disabled={create.isPending}>{t('invites.send')}</button>
        </form>
        {link && (
          <div className="created">
            <Notice>{t('invites.sent', { email: create.data?.invite.email ?? '' })}</Notice>
            <div className="field">
              <label htmlFor="invite-link">{t('invites.link')}</label>
              <input id="invite-link" readOnly value={link} className="mono" />
            </div>
            <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(link).then(() => setCopied(true))}>
              {t('invites.copyLink')}
            </button>
            {copied && <span role="status">{t('invites.copied')}</span>}
          </div>
        )}
      </section>
      <section aria-labelledby="invite-list" className="panel">
        <h2 id="invite-list">{t('invites.list')}</h2>
        <div className="filters">
          <Checkbox label={t('invites.showAccepted')} name="includeAccepted" onChange={setIncludeAccepted} />
          <Checkbox label={t('invites.showRevoked')} name="includeRevoked" onChange={setIncludeRevoked} />
        </div>
        <ErrorAlert
          error={invites.error ? toFormError(invites.error) : revoke.error ? toFormError(revoke.error) : resend.error ? toFormError(resend.error) : null}
        />
        {resend.data && <Notice>{t('invites.resent', { email: resend.data.invite.email })}</Notice>}
        <div className="table-wrap">
          <table className="cards">
            <thead>
              <tr><th scope="col">{t('table.email')}</th><th scope="col">{t('table.role')}</th><th scope="col">{t('table.status')}</th><th scope="col">{t('table.expires')}</th><th scope="col">{t('table.actions')}</th></tr>
            </thead>
            <tbody>
              {invites.data?.items.map((i) => (
                <tr key={i.id}>
                  <td role="cell">{i.email}</td>
                  <td role="cell" data-label={t('table.role')}>{t(`values.roles.${i.role}`)}</td>
                  <td role="cell" data-label={t('table.status')}>{t(`values.inviteStatuses.${i.status}`)}</td>
                  <td role="cell" data-label={t('table.expires')}>{when(i.expiresAt)}</td>
                  <td role="cell" className="actions">
                    {(i.status === 'Open' || i.status === 'Expired') && (
                      <button type="button" className="secondary" aria-label={t('invites.resendLabel', { email: i.email })} disabled={resend.isPending} onClick={() => resend.mutate(i.id)}>
                        {t('invites.resend')}
                      </button>
                    )}
                    {i.status === 'Open' && (
                      <button type="button" className="danger" aria-label={t('invites.revokeLabel', { email: i.email })} onClick={() => revoke.mutate(i.id)}>{t('invites.revoke')}</button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </main>
  );
}

/** API keys: create (plaintext shown once), list, revoke. */
export function ApiKeysPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('apiKeys.title'));
  const slug = useSlug();
  const queryClient = useQueryClient();
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const keys = useQuery({ queryKey: ['api-keys', slug, includeRevoked], queryFn: () => trpc.apiKeys.list.query({ tenantSlug: slug, includeRevoked }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['api-keys', slug] });
  const create = useMutation({
    mutationFn: ({ form }: { form: FormData; element: HTMLFormElement }) => {
      const expires = formValue(form, 'expiresAt');
      return trpc.apiKeys.create.mutate({
        tenantSlug: slug,
        name: formValue(form, 'name') ?? '',
        environment: (formValue(form, 'environment') ?? 'live') as Environment,
        expiresAt: expires ? new Date(expires).toISOString() : undefined,
      });
    },
    onSuccess: (_data, { element }) => {
      element.reset();
      return refresh();
    },
  });
  const revoke = useMutation({ mutationFn: (id: string) => trpc.apiKeys.revoke.mutate({ tenantSlug: slug, id }), onSuccess: refresh });
  const error = create.error ? toFormError(create.error) : null;
  return (
    <main className="page" id="main">
      <h1>{t('apiKeys.title')}</h1>
      <section aria-labelledby="new-key" className="panel">
        <h2 id="new-key">{t('apiKeys.new')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
          }}
        >
          <ErrorAlert error={error} />
          <Field label={t('apiKeys.name')} name="name" required error={error} />
          <Select label={t('apiKeys.environment')} name="environment" options={ENVIRONMENTS} defaultValue="live" optionLabel={(e) => t(`values.environments.${e as Environment}`)} />
          <Field label={t('apiKeys.expires')} name="expiresAt" type="datetime-local" error={error} />
          <button type="submit" disabled={create.isPending}>{t('apiKeys.create')}</button>
        </form>
        {create.data && (
          <div className="created">
            <Notice>{t('apiKeys.copyNow')}</Notice>
            <CopyField id="new-key-plaintext" label={t('apiKeys.newKey')} value={create.data.plaintext} />
          </div>
        )}
      </section>
      <section aria-labelledby="key-list" className="panel">
        <h2 id="key-list">{t('apiKeys.list')}</h2>
        <Checkbox label={t('apiKeys.showRevoked')} name="includeRevoked" onChange={setIncludeRevoked} />
        <ErrorAlert error={keys.error ? toFormError(keys.error) : revoke.error ? toFormError(revoke.error) : null} />
        <div className="table-wrap">
          <table className="cards">
            <thead>
              <tr><th scope="col">{t('table.name')}</th><th scope="col">{t('table.prefix')}</th><th scope="col">{t('table.environment')}</th><th scope="col">{t('table.lastUsed')}</th><th scope="col">{t('table.status')}</th><th scope="col">{t('table.actions')}</th></tr>
            </thead>
            <tbody>
              {keys.data?.items.map((k) => (
                <tr key={k.id}>
                  <td role="cell">{k.name}</td>
                  <td role="cell" data-label={t('table.prefix')} className="mono">{k.prefix}</td>
                  <td role="cell" data-label={t('table.environment')}>{t(`values.environments.${k.environment}`)}</td>
                  <td role="cell" data-label={t('table.lastUsed')}>{when(k.lastUsedAt)}</td>
                  <td role="cell" data-label={t('table.status')}>{k.revokedAt ? t('apiKeys.revokedAt', { date: when(k.revokedAt) }) : k.expiresAt ? t('apiKeys.expiresAt', { date: when(k.expiresAt) }) : t('apiKeys.active')}</td>
                  <td role="cell" className="actions">
                    {!k.revokedAt && (
                      <button type="button" className="danger" aria-label={t('apiKeys.revokeLabel', { name: k.name })} onClick={() => revoke.mutate(k.id)}>{t('apiKeys.revoke')}</button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </main>
  );
}

/** Workspace settings: name, MFA policy, email verification, IdP client (secret write-only). */
export function SettingsPage() {
  const { t: tr } = useTranslation('admin');
  usePageTitle(tr('settings.title'));
  const slug = useSlug();
  const queryClient = useQueryClient();
  const tenant = useQuery({ queryKey: ['tenant', slug], queryFn: () => trpc.tenant.get.query({ tenantSlug: slug }) });
  const update = useMutation({
    mutationFn: (form: FormData) =>
      trpc.tenant.update.mutate({
        tenantSlug: slug,
        name: formValue(form, 'name'),
        mfaPolicy: formValue(form, 'mfaPolicy') as MfaPolicy | undefined,
        requireEmailVerification: form.get('requireEmailVerification') === 'on',
        signupPolicy: formValue(form, 'signupPolicy') as SignupPolicy | undefined,
        signupEmailDomains: (formValue(form, 'signupEmailDomains') ?? '').split(/[\s,]+/).filter(Boolean),
        defaultLocale: formValue(form, 'defaultLocale') as Locale | undefined,
      }),
    onSuccess: (data) => {
      queryClient.setQueryData(['tenant', slug], data);
      void queryClient.invalidateQueries({ queryKey: ['sign-in-options', slug] });
    },
  });
  /**
   * Before MFA becomes Required: who has no authenticator yet (they will have to set one up at their
   * next sign-in), named in the confirmation.
   */
  const confirm = useConfirm();
  const confirmMfaRequired = async (form: FormData): Promise<boolean> => {
    if (formValue(form, 'mfaPolicy') !== 'Required' || tenant.data?.mfaPolicy === 'Required') return true;
    const all = await trpc.users.list.query({ tenantSlug: slug });
    const without = all.items.filter((u) => !u.totpEnrolled).map((u) => u.email);
    if (without.length === 0) return confirm({ message: tr('settings.confirmRequiredAll'), confirmLabel: tr('confirmActions.requireMfa') });
    const shown = without.slice(0, 10).join(', ');
    const names = without.length > 10 ? tr('settings.andMore', { names: shown, count: without.length - 10 }) : shown;
    return confirm({ message: tr('settings.confirmRequired', { count: without.length, names }), confirmLabel: tr('confirmActions.requireMfa') });
  };
  const putIdp = useMutation({
    mutationFn: (form: FormData) =>
      trpc.idp.putCredentials.mutate({
        tenantSlug: slug,
        clientId: formValue(form, 'clientId') ?? '',
        clientSecret: formValue(form, 'clientSecret') ?? '',
        issuer: formValue(form, 'issuer'),
        allowedEmailDomains: (formValue(form, 'allowedEmailDomains') ?? '').split(/[\s,]+/).filter(Boolean),
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['tenant', slug] }),
  });
  const deleteIdp = useMutation({
    mutationFn: () => trpc.idp.deleteCredentials.mutate({ tenantSlug: slug }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['tenant', slug] }),
  });
  if (tenant.isPending) return <p role="status" className="loading">{tr('ui.loading', { ns: 'common' })}</p>;
  if (tenant.error) return <ErrorAlert error={toFormError(tenant.error)} />;
  const t = tenant.data;
  const updateError = update.error ? toFormError(update.error) : null;
  const idpError = putIdp.error ? toFormError(putIdp.error) : deleteIdp.error ? toFormError(deleteIdp.error) : null;
  return (
    <main className="page" id="main">
      <h1>{tr('settings.title')}</h1>
      <section aria-labelledby="general" className="panel">
        <h2 id="general">{tr('settings.general')}</h2>
        <form
          key={t.createdAt + t.name + t.mfaPolicy + String(t.requireEmailVerification) + t.signupPolicy + t.signupEmailDomains.join(',') + t.defaultLocale}
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            void confirmMfaRequired(form).then((go) => go && update.mutate(form));
          }}
        >
          <ErrorAlert error={updateError} />
          {update.isSuccess && <Notice>{tr('settings.saved')}</Notice>}
          <Field label={tr('settings.name')} name="name" defaultValue={t.name} required error={updateError} />
          <Select label={tr('settings.mfa')} name="mfaPolicy" options={MFA_POLICIES} defaultValue={t.mfaPolicy} optionLabel={(o) => tr(`values.mfaPolicies.${o as MfaPolicy}`)} />
          <Checkbox label={tr('settings.requireVerification')} name="requireEmailVerification" defaultChecked={t.requireEmailVerification} />
          <Select label={tr('settings.signupPolicy')} name="signupPolicy" options={SIGNUP_POLICIES} defaultValue={t.signupPolicy} optionLabel={(o) => tr(`values.signupPolicies.${o as SignupPolicy}`)} />
          <Field
            label={tr('settings.signupDomains')}
            name="signupEmailDomains"
            defaultValue={t.signupEmailDomains.join(', ')}
            error={updateError}
            hint={tr('settings.signupDomainsHint')}
          />
          <Select label={tr('settings.defaultLanguage')} name="defaultLocale" options={LOCALES} defaultValue={t.defaultLocale} optionLabel={(l) => LOCALE_NAMES[l as Locale]} />
          <p className="hint">{tr('settings.defaultLanguageHint')}</p>
          <button type="submit" disabled={update.isPending}>{tr('settings.save')}</button>
        </form>
      </section>
      <PoliciesSection slug={slug} tenant={t} />
      <BrandingSection slug={slug} tenant={t} />
      <section aria-labelledby="idp" className="panel">
        <h2 id="idp">{tr('settings.idp')}</h2>
        <p>{t.idpOauthEnabled ? tr('settings.idpOn') : tr('settings.idpOff')}</p>
        <p>
          <Trans
            t={tr}
            i18nKey="settings.idpProvider"
            values={{ issuer: t.idpIssuer, suffix: t.idpIssuerIsDefault ? tr('settings.idpDefault') : '', redirectUri: t.idpRedirectUri }}
            components={{ code: <code /> }}
          />
        </p>
        <form
          key={t.idpIssuer + t.idpAllowedEmailDomains.join(',')}
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            putIdp.mutate(new FormData(form), { onSuccess: () => form.reset() });
          }}
        >
          <ErrorAlert error={idpError} />
          <Field label={tr('settings.clientId')} name="clientId" defaultValue={t.idpClientId} required error={idpError} />
          <Field
            label={tr('settings.clientSecret')}
            name="clientSecret"
            type="password"
            autoComplete="off"
            required
            error={idpError}
            hint={t.hasIdpClientSecret ? tr('settings.secretStored') : tr('settings.secretNever')}
          />
          <Field
            label={tr('settings.issuer')}
            name="issuer"
            defaultValue={t.idpIssuerIsDefault ? '' : t.idpIssuer}
            error={idpError}
            hint={tr('settings.issuerHint')}
          />
          <Field
            label={tr('settings.allowedDomains')}
            name="allowedEmailDomains"
            defaultValue={t.idpAllowedEmailDomains.join(', ')}
            error={idpError}
            hint={tr('settings.allowedDomainsHint')}
          />
          <button type="submit" disabled={putIdp.isPending}>{tr('settings.saveProvider')}</button>
          {t.idpOauthEnabled && (
            <button type="button" className="danger" onClick={() => deleteIdp.mutate()} disabled={deleteIdp.isPending}>{tr('settings.removeProvider')}</button>
          )}
        </form>
      </section>
    </main>
  );
}

interface AuditFilters {
  action?: AuditAction;
  userId?: string;
  search?: string;
  /** The date range: `since` the start of the first day, `until` the start of the day after the last (exclusive). */
  since?: string;
  until?: string;
  limit?: number;
}

/** A `<input type="date">` value as the start of that day in the reader's time zone, `days` later. */
function startOfLocalDay(value: string, days = 0): string {
  const [year, month, day] = value.split('-').map(Number) as [number, number, number];
  return new Date(year, month - 1, day + days).toISOString();
}

/** How many users the audit page loads to name actors and targets and to fill its user picker. */
const AUDIT_PEOPLE_LIMIT = 1000;

/**
 * The audit log with every filter of the API (action, user, date range, search, limit), paging back in
 * time, and the filtered view exported as CSV or JSON (docs/web.md "Console").
 */
export function AuditPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('audit.title'));
  const slug = useSlug();
  const linked = useSearch({ from: '/app/$slug/signed-in/admin/audit' });
  const userPickerId = useId();
  const people = useQuery({
    queryKey: ['users', slug, 'audit-people'],
    queryFn: () => trpc.users.list.query({ tenantSlug: slug, limit: AUDIT_PEOPLE_LIMIT }),
  });
  const emailOf = new Map((people.data?.items ?? []).map((u) => [u.id, u.email]));
  const [shown, setShown] = useState<AuditItem | null>(null);
  /**
   * An actor or target: a live user by email, linked to their page, with "(events)" filtering the log
   * to them; a deleted user as "Deleted user" with the email the event recorded; else the kind and a short id.
   */
  const party = (item: AuditItem, side: 'actor' | 'target') => {
    const named = nameParty(item, side);
    if (named?.userId) {
      const id = named.userId;
      return (
        <>
          <PartyText party={named} slug={slug} />{' '}
          <button type="button" className="link" onClick={() => setFilters((f) => ({ ...f, userId: id }))} aria-label={t('audit.eventsOf', { email: named.text })}>
            {t('audit.events')}
          </button>
        </>
      );
    }
    return <PartyText party={named} slug={slug} />;
  };
  const [filters, setFilters] = useState<AuditFilters>({ userId: linked.userId });
  const [before, setBefore] = useState<string[]>([]);
  const { until, ...listFilters } = filters;
  const cursor = before.at(-1) ?? until;
  const audit = useQuery({
    queryKey: ['audit', slug, filters, cursor],
    queryFn: () => trpc.audit.list.query({ tenantSlug: slug, ...listFilters, before: cursor }),
    placeholderData: keepPreviousData,
  });
  const exportView = useMutation({
    mutationFn: (format: 'csv' | 'json') => {
      const query = new URLSearchParams({ format });
      for (const key of ['action', 'userId', 'search', 'since'] as const) {
        const value = filters[key];
        if (value) query.set(key, value);
      }
      if (until) query.set('before', until);
      return downloadFile(slug, `/v1/${encodeURIComponent(slug)}/audit/export?${query.toString()}`);
    },
  });
  const error = audit.error ? toFormError(audit.error) : exportView.error ? toFormError(exportView.error) : null;
  const items = audit.data?.items ?? [];
  const limit = filters.limit ?? 50;
  // fewer users than asked for: the list is all of them, so an id not in it is a deleted user
  const nameParty = useNameParty({ emailOf, complete: people.isSuccess && people.data.items.length < AUDIT_PEOPLE_LIMIT, recorded: recordedEmails(items) });
  return (
    <main className="page" id="main">
      <h1>{t('audit.title')}</h1>
      <form
        className="filters panel"
        aria-label={t('audit.filters')}
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const limitValue = formValue(form, 'limit');
          const fromValue = formValue(form, 'from');
          const toValue = formValue(form, 'to');
          setFilters({
            action: formValue(form, 'action') as AuditAction | undefined,
            userId: formValue(form, 'userId'),
            search: formValue(form, 'search'),
            since: fromValue ? startOfLocalDay(fromValue) : undefined,
            until: toValue ? startOfLocalDay(toValue, 1) : undefined,
            limit: limitValue ? Number(limitValue) : undefined,
          });
          setBefore([]);
        }}
      >
        <ActionSelect label={t('audit.action')} name="action" emptyLabel={t('audit.anyAction')} />
        <div className="field">
          <label htmlFor={userPickerId}>{t('audit.user')}</label>
          <select id={userPickerId} name="userId" key={filters.userId ?? ''} defaultValue={filters.userId ?? ''}>
            <option value="">{t('audit.anyone')}</option>
            {(people.data?.items ?? []).map((u) => (
              <option key={u.id} value={u.id}>{u.email}</option>
            ))}
          </select>
        </div>
        <Field label={t('audit.search')} name="search" error={error} hint={t('audit.searchHint')} />
        <Field label={t('audit.from')} name="from" type="date" error={error} hint={t('audit.fromHint')} />
        <Field label={t('audit.to')} name="to" type="date" error={error} hint={t('audit.toHint')} />
        <Field label={t('audit.limit')} name="limit" type="number" min={1} max={200} error={error} />
        <button type="submit">{t('audit.apply')}</button>
      </form>
      <div className="actions" role="group" aria-label={t('audit.export')}>
        <button type="button" className="secondary" onClick={() => exportView.mutate('csv')} disabled={exportView.isPending}>{t('audit.exportCsv')}</button>
        <button type="button" className="secondary" onClick={() => exportView.mutate('json')} disabled={exportView.isPending}>{t('audit.exportJson')}</button>
      </div>
      <ErrorAlert error={error} />
      <div className="table-wrap">
        <table className="cards">
          <thead>
            <tr><th scope="col">{t('table.time')}</th><th scope="col">{t('table.action')}</th><th scope="col">{t('table.actor')}</th><th scope="col">{t('table.target')}</th><th scope="col">{t('table.details')}</th><th scope="col">{t('table.actions')}</th></tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.id}>
                <td role="cell">{when(item.createdAt)}</td>
                <td role="cell" data-label={t('table.action')}><ActionLabel action={item.action} /></td>
                <td role="cell" data-label={t('table.actor')}>{party(item, 'actor')}</td>
                <td role="cell" data-label={t('table.target')}>{party(item, 'target')}</td>
                <td role="cell" data-label={t('table.details')} className="details">{formatDetails(item.details)}</td>
                <td role="cell" className="actions"><EventDetailButton event={item} onOpen={() => setShown(item)} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {items.length === 0 && !audit.isPending && <p>{t('audit.none')}</p>}
      <div className="pager">
        <button type="button" className="secondary" disabled={before.length === 0} onClick={() => setBefore((b) => b.slice(0, -1))}>{t('audit.newer')}</button>
        <button type="button" className="secondary" disabled={items.length < limit} onClick={() => setBefore((b) => [...b, items.at(-1)!.createdAt])}>{t('audit.older')}</button>
      </div>
      {shown && <EventDetail event={shown} nameParty={nameParty} slug={slug} onClose={() => setShown(null)} />}
    </main>
  );
}
