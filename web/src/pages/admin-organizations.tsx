import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useDeferredValue, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { when } from '../audit-format';
import { useConfirm } from '../confirm';
import { usePageTitle, useSlug } from '../hooks';
import { CopyField, ErrorAlert, Field, formValue, Notice } from '../ui';

type OrganizationRole = RouterOutputs['organizationRoles']['list']['items'][number];
type Member = RouterOutputs['organizations']['listMembers']['items'][number];
/** Members read a page at a time on an organization's page. */
const MEMBERS_PAGE_SIZE = 100;

/** Organizations a page of the list loads ("Load more" for the next). */
const ORGANIZATIONS_PAGE_SIZE = 50;
/** Users the member picker offers for a search. */
const MEMBER_PICKER_LIMIT = 50;

/** Organization permission names typed in one field, separated by spaces or commas. */
const permissionWords = (text: string | undefined): string[] => [...new Set((text ?? '').split(/[\s,]+/).filter(Boolean))];

/** The organization roles checked in a form (checkboxes named `role`). */
const checkedRoles = (form: FormData): string[] => form.getAll('role').filter((value): value is string => typeof value === 'string');

/** Checkboxes of the workspace's organization roles, `held` checked; a group named by `legend`. */
function OrganizationRolePicker({ roles, held, legend, idPrefix }: { roles: readonly OrganizationRole[]; held: readonly string[]; legend: string; idPrefix: string }) {
  const { t } = useTranslation('admin');
  if (roles.length === 0) return <p className="muted">{t('organizations.noRolesYet')}</p>;
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="checks">
        {roles.map((role) => (
          <div key={role.id} className="field checkbox">
            <input id={`${idPrefix}-${role.id}`} type="checkbox" name="role" value={role.name} defaultChecked={held.includes(role.name)} />
            <label htmlFor={`${idPrefix}-${role.id}`}>{role.name}</label>
          </div>
        ))}
      </div>
    </fieldset>
  );
}

/** One organization role: its name, description and permissions, edited in place (PATCH organization-roles/{id}), or deleted. */
function OrganizationRoleRow({ slug, role, onResult }: { slug: string; role: OrganizationRole; onResult: (message: string) => void }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['organization-roles', slug] });
  const save = useMutation({
    mutationFn: (form: FormData) =>
      trpc.organizationRoles.update.mutate({
        tenantSlug: slug, id: role.id, name: formValue(form, 'name'), description: formValue(form, 'description') ?? null, permissions: permissionWords(formValue(form, 'permissions')),
      }),
    onSuccess: async (data) => {
      await refresh();
      setEditing(false);
      onResult(t('organizationRoles.saved', { name: data.name }));
    },
  });
  const remove = useMutation({
    mutationFn: () => trpc.organizationRoles.delete.mutate({ tenantSlug: slug, id: role.id }),
    onSuccess: async () => {
      await refresh();
      onResult(t('organizationRoles.deleted', { name: role.name }));
    },
  });
  const confirm = useConfirm();
  const error = save.error ?? remove.error;
  const formError = save.error ? toFormError(save.error) : null;
  return (
    <li className="endpoint">
      <p><strong>{role.name}</strong>{role.description ? ` · ${role.description}` : ''}</p>
      <p className="mono wrap">{role.permissions.length > 0 ? role.permissions.join(' ') : t('organizationRoles.noPermissions')}</p>
      <ErrorAlert error={error ? toFormError(error) : null} />
      <div className="actions">
        <button type="button" className="secondary" aria-expanded={editing} aria-label={t('organizationRoles.editLabel', { name: role.name })} onClick={() => setEditing(!editing)}>
          {t('organizationRoles.edit')}
        </button>
        <button
          type="button" className="danger" aria-label={t('organizationRoles.deleteLabel', { name: role.name })}
          onClick={() => void confirm({ message: t('organizationRoles.deleteConfirm', { name: role.name }), confirmLabel: t('confirmActions.deleteOrganizationRole') }).then((ok) => ok && remove.mutate())}
        >
          {t('organizationRoles.delete')}
        </button>
      </div>
      {editing && (
        <form
          aria-label={t('organizationRoles.editLabel', { name: role.name })}
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate(new FormData(e.currentTarget));
          }}
        >
          <Field label={t('organizationRoles.name')} name="name" defaultValue={role.name} required error={formError} />
          <Field label={t('organizationRoles.description')} name="description" defaultValue={role.description ?? ''} error={formError} />
          <Field label={t('organizationRoles.permissions')} name="permissions" defaultValue={role.permissions.join(' ')} error={formError} hint={t('organizationRoles.permissionsHint')} />
          <button type="submit" disabled={save.isPending}>{t('organizationRoles.save', { name: role.name })}</button>
        </form>
      )}
    </li>
  );
}

/**
 * The workspace's one template of organization roles (docs/organizations.md "Roles"): every
 * organization has the same roles; each holds organization permissions.
 */
function OrganizationRolesSection({ slug }: { slug: string }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const [result, setResult] = useState<string | null>(null);
  const roles = useQuery({ queryKey: ['organization-roles', slug], queryFn: () => trpc.organizationRoles.list.query({ tenantSlug: slug }) });
  const create = useMutation({
    mutationFn: (input: { form: FormData; element: HTMLFormElement }) =>
      trpc.organizationRoles.create.mutate({
        tenantSlug: slug, name: formValue(input.form, 'name') ?? '', description: formValue(input.form, 'description') ?? null,
        permissions: permissionWords(formValue(input.form, 'permissions')),
      }),
    onSuccess: async (data, input) => {
      input.element.reset();
      await queryClient.invalidateQueries({ queryKey: ['organization-roles', slug] });
      setResult(t('organizationRoles.created', { name: data.organizationRole.name }));
    },
  });
  const error = create.error ? toFormError(create.error) : null;
  return (
    <section aria-labelledby="organization-roles" className="panel">
      <h2 id="organization-roles">{t('organizationRoles.title')}</h2>
      <p>{t('organizationRoles.intro')}</p>
      <ErrorAlert error={roles.error ? toFormError(roles.error) : null} />
      {result && <Notice>{result}</Notice>}
      {roles.data?.items.length === 0 && <p className="muted">{t('organizationRoles.none')}</p>}
      <ul className="endpoints" aria-label={t('organizationRoles.list')}>
        {roles.data?.items.map((role) => <OrganizationRoleRow key={role.id} slug={slug} role={role} onResult={setResult} />)}
      </ul>
      <form
        aria-labelledby="new-organization-role"
        onSubmit={(e) => {
          e.preventDefault();
          setResult(null);
          create.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
        }}
      >
        <h3 id="new-organization-role">{t('organizationRoles.add')}</h3>
        <ErrorAlert error={error} />
        <Field label={t('organizationRoles.name')} name="name" required error={error} />
        <Field label={t('organizationRoles.description')} name="description" error={error} />
        <Field label={t('organizationRoles.permissions')} name="permissions" error={error} hint={t('organizationRoles.permissionsHint')} placeholder="read:invoices invite:members" />
        <button type="submit" disabled={create.isPending}>{t('organizationRoles.addButton')}</button>
      </form>
    </section>
  );
}

/**
 * `/app/{slug}/admin/organizations`: the workspace's own customers (docs/organizations.md): search by
 * name, page by page, create; and the organization roles every organization shares.
 */
export function OrganizationsPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('organizations.title'));
  const slug = useSlug();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const searchId = useId();
  const [search, setSearch] = useState('');
  const deferredSearch = useDeferredValue(search.trim());
  const organizations = useInfiniteQuery({
    queryKey: ['organizations', slug, deferredSearch],
    queryFn: ({ pageParam }) => trpc.organizations.list.query({ tenantSlug: slug, search: deferredSearch || undefined, limit: ORGANIZATIONS_PAGE_SIZE, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
  });
  const create = useMutation({
    mutationFn: (form: FormData) =>
      trpc.organizations.create.mutate({ tenantSlug: slug, name: formValue(form, 'name') ?? '', description: formValue(form, 'description') ?? null }),
    onSuccess: async (data) => {
      await queryClient.invalidateQueries({ queryKey: ['organizations', slug] });
      await navigate({ to: '/app/$slug/admin/organizations/$organizationId', params: { slug, organizationId: data.organization.id } });
    },
  });
  const createError = create.error ? toFormError(create.error) : null;
  const items = organizations.data?.pages.flatMap((page) => page.items) ?? [];
  const nothingYet = organizations.isSuccess && items.length === 0 && deferredSearch === '';
  return (
    <main className="page" id="main">
      <h1>{t('organizations.title')}</h1>
      <p>{t('organizations.intro')}</p>
      <section aria-labelledby="new-organization" className="panel">
        <h2 id="new-organization">{t('organizations.add')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={createError} />
          <Field label={t('organizations.name')} name="name" required error={createError} />
          <Field label={t('organizations.description')} name="description" error={createError} />
          <button type="submit" disabled={create.isPending}>{t('organizations.addButton')}</button>
        </form>
      </section>
      <section aria-labelledby="organization-list" className="panel">
        <h2 id="organization-list">{t('organizations.list')}</h2>
        <ErrorAlert error={organizations.error ? toFormError(organizations.error) : null} />
        {nothingYet ? (
          <div className="empty-state">
            <p>{t('organizations.emptyWhat')}</p>
            <p>{t('organizations.emptyHow')}</p>
          </div>
        ) : (
          <>
            <div className="field">
              <label htmlFor={searchId}>{t('organizations.search')}</label>
              <input id={searchId} type="search" value={search} onChange={(e) => setSearch(e.target.value)} maxLength={200} />
            </div>
            <div className="table-wrap">
              <table className="cards">
                <thead>
                  <tr><th scope="col">{t('organizations.name')}</th><th scope="col">{t('organizations.description')}</th><th scope="col">{t('organizations.memberCount')}</th><th scope="col">{t('organizations.created')}</th></tr>
                </thead>
                <tbody>
                  {items.map((organization) => (
                    <tr key={organization.id}>
                      <td role="cell"><Link to="/app/$slug/admin/organizations/$organizationId" params={{ slug, organizationId: organization.id }}>{organization.name}</Link></td>
                      <td role="cell" data-label={t('organizations.description')}>{organization.description ?? '—'}</td>
                      <td role="cell" data-label={t('organizations.memberCount')}>{organization.memberCount}</td>
                      <td role="cell" data-label={t('organizations.created')}>{when(organization.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p role="status" className="muted">
              {organizations.isSuccess && (organizations.hasNextPage ? t('organizations.more', { count: items.length }) : t('organizations.all', { count: items.length }))}
            </p>
            {organizations.hasNextPage && (
              <button type="button" className="secondary" onClick={() => organizations.fetchNextPage()} disabled={organizations.isFetchingNextPage}>
                {t('organizations.loadMore')}
              </button>
            )}
          </>
        )}
      </section>
      <OrganizationRolesSection slug={slug} />
    </main>
  );
}

/** One member: email (linked to the user page), organization roles as checkboxes ("Save roles"), "Remove". */
function MemberRow({ slug, organizationId, member, roles, onResult }: { slug: string; organizationId: string; member: Member; roles: readonly OrganizationRole[]; onResult: (message: string) => void }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const email = member.user.email;
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['organization-members', slug, organizationId] });
  const save = useMutation({
    mutationFn: (form: FormData) => trpc.organizations.updateMember.mutate({ tenantSlug: slug, id: organizationId, userId: member.user.id, roles: checkedRoles(form) }),
    onSuccess: async () => {
      await refresh();
      onResult(t('organizations.rolesSaved', { email }));
    },
  });
  const remove = useMutation({
    mutationFn: () => trpc.organizations.removeMember.mutate({ tenantSlug: slug, id: organizationId, userId: member.user.id }),
    onSuccess: async () => {
      await refresh();
      onResult(t('organizations.removed', { email }));
    },
  });
  const confirm = useConfirm();
  const error = save.error ?? remove.error;
  return (
    <li className="endpoint">
      <p><Link to="/app/$slug/admin/users/$userId" params={{ slug, userId: member.user.id }}>{email}</Link></p>
      <ErrorAlert error={error ? toFormError(error) : null} />
      <form
        aria-label={t('organizations.rolesOf', { email })}
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(new FormData(e.currentTarget));
        }}
      >
        <OrganizationRolePicker roles={roles} held={member.roles} legend={t('organizations.rolesOf', { email })} idPrefix={`member-${member.user.id}`} />
        <div className="actions">
          {roles.length > 0 && (
            <button type="submit" className="secondary" disabled={save.isPending} aria-label={t('organizations.saveRolesLabel', { email })}>{t('organizations.saveRoles')}</button>
          )}
          <button
            type="button" className="danger" aria-label={t('organizations.removeLabel', { email })}
            onClick={() => void confirm({ message: t('organizations.removeConfirm', { email }), confirmLabel: t('confirmActions.removeMember') }).then((ok) => ok && remove.mutate())}
          >
            {t('organizations.remove')}
          </button>
        </div>
      </form>
    </li>
  );
}

/** "Add a member": a user found by email (a search and a pick from the matches) and their organization roles. */
function AddMember({ slug, organizationId, members, roles, onResult }: { slug: string; organizationId: string; members: readonly Member[]; roles: readonly OrganizationRole[]; onResult: (message: string) => void }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const searchId = useId();
  const pickerId = useId();
  const [search, setSearch] = useState('');
  const deferredSearch = useDeferredValue(search.trim());
  const users = useQuery({
    queryKey: ['users', slug, 'member-picker', deferredSearch],
    queryFn: () => trpc.users.list.query({ tenantSlug: slug, search: deferredSearch || undefined, limit: MEMBER_PICKER_LIMIT }),
    placeholderData: keepPreviousData,
  });
  const memberIds = new Set(members.map((m) => m.user.id));
  const candidates = (users.data?.items ?? []).filter((u) => !memberIds.has(u.id));
  const add = useMutation({
    mutationFn: (input: { form: FormData; element: HTMLFormElement }) =>
      trpc.organizations.addMember.mutate({ tenantSlug: slug, id: organizationId, userId: formValue(input.form, 'userId') ?? '', roles: checkedRoles(input.form) }),
    onSuccess: async (data, input) => {
      input.element.reset();
      await queryClient.invalidateQueries({ queryKey: ['organization-members', slug, organizationId] });
      onResult(t('organizations.added', { email: data.member.user.email }));
    },
  });
  return (
    <section aria-labelledby="add-member" className="panel">
      <h2 id="add-member">{t('organizations.addMember')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
        }}
      >
        <ErrorAlert error={add.error ? toFormError(add.error) : null} />
        <div className="field">
          <label htmlFor={searchId}>{t('organizations.findUser')}</label>
          <input id={searchId} type="search" value={search} onChange={(e) => setSearch(e.target.value)} maxLength={254} />
        </div>
        <div className="field">
          <label htmlFor={pickerId}>{t('organizations.user')}</label>
          <select id={pickerId} name="userId" required>
            <option value="">{candidates.length > 0 ? t('organizations.chooseUser') : t('organizations.noUserFound')}</option>
            {candidates.map((u) => <option key={u.id} value={u.id}>{u.email}</option>)}
          </select>
        </div>
        <OrganizationRolePicker roles={roles} held={[]} legend={t('organizations.newMemberRoles')} idPrefix="new-member" />
        <button type="submit" disabled={add.isPending}>{t('organizations.addMemberButton')}</button>
      </form>
    </section>
  );
}

/**
 * "Invite into the organization" (POST invites with `organizationId` and `organizationRoles`,
 * docs/organizations.md "Invitations into an organization"): the invite is mailed; a new person
 * creates an account, one with an account accepts after signing in; both land as members with the roles.
 */
function InviteMember({ slug, organizationId, roles }: { slug: string; organizationId: string; roles: readonly OrganizationRole[] }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const invite = useMutation({
    mutationFn: (input: { form: FormData; element: HTMLFormElement }) =>
      trpc.invites.create.mutate({ tenantSlug: slug, email: formValue(input.form, 'email') ?? '', organizationId, organizationRoles: checkedRoles(input.form) }),
    onSuccess: (_data, input) => {
      input.element.reset();
      return queryClient.invalidateQueries({ queryKey: ['invites', slug] });
    },
  });
  const error = invite.error ? toFormError(invite.error) : null;
  const link = invite.data ? `${window.location.origin}/app/${slug}/accept-invite?token=${encodeURIComponent(invite.data.token)}` : null;
  return (
    <section aria-labelledby="invite-member" className="panel">
      <h2 id="invite-member">{t('organizations.invite')}</h2>
      <p className="hint">{t('organizations.inviteHint')}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          invite.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
        }}
      >
        <ErrorAlert error={error} />
        <Field label={t('organizations.inviteEmail')} name="email" type="email" autoComplete="off" required error={error} />
        <OrganizationRolePicker roles={roles} held={[]} legend={t('organizations.inviteRoles')} idPrefix="invite" />
        <button type="submit" disabled={invite.isPending}>{t('organizations.inviteButton')}</button>
      </form>
      {invite.data && link && (
        <div className="created">
          <Notice>{t('organizations.invited', { email: invite.data.invite.email })}</Notice>
          <CopyField id="organization-invite-link" label={t('organizations.inviteLink')} value={link} />
        </div>
      )}
    </section>
  );
}

/**
 * `/app/{slug}/admin/organizations/{organizationId}`: one organization: name and description (editable),
 * its members with their organization roles (add, change roles, remove), invitations into it, and deletion
 * (docs/organizations.md, docs/web.md "Console").
 */
/**
 * The enterprise SSO connections that sign people into this organization (docs/sso.md: a connection's
 * `organizationId`), each linking to its page, or a link to set one up for it.
 */
function OrganizationSso({ slug, organizationId }: { slug: string; organizationId: string }) {
  const { t } = useTranslation('admin');
  const connections = useQuery({ queryKey: ['sso-connections', slug], queryFn: () => trpc.sso.list.query({ tenantSlug: slug }) });
  const mine = (connections.data?.items ?? []).filter((connection) => connection.organizationId === organizationId);
  return (
    <section aria-labelledby="organization-sso" className="panel">
      <h2 id="organization-sso">{t('organizations.sso')}</h2>
      <ErrorAlert error={connections.error ? toFormError(connections.error) : null} />
      {connections.data && mine.length === 0 && <p className="muted">{t('organizations.noSso')}</p>}
      {mine.length > 0 && (
        <ul aria-label={t('organizations.ssoList')}>
          {mine.map((connection) => (
            <li key={connection.id}>
              <Link to="/app/$slug/admin/sso/$connectionId" params={{ slug, connectionId: connection.id }}>{connection.name}</Link>{' '}
              <span className="muted">{t('organizations.ssoDomains', { domains: connection.domains.join(', ') })}</span>
            </li>
          ))}
        </ul>
      )}
      {connections.data && (
        <p><Link to="/app/$slug/admin/sso/new" params={{ slug }} search={{ organizationId }}>{t('organizations.addSso')}</Link></p>
      )}
    </section>
  );
}

export function OrganizationPage() {
  const { t } = useTranslation('admin');
  const slug = useSlug();
  const { organizationId } = useParams({ from: '/app/$slug/signed-in/admin/organizations/$organizationId' });
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [result, setResult] = useState<string | null>(null);
  const organization = useQuery({ queryKey: ['organization', slug, organizationId], queryFn: () => trpc.organizations.get.query({ tenantSlug: slug, id: organizationId }) });
  // a page of members at a time (GET organizations/{id}/members limit + cursor), "Load more" for the next
  const members = useInfiniteQuery({
    queryKey: ['organization-members', slug, organizationId],
    queryFn: ({ pageParam }) => trpc.organizations.listMembers.query({ tenantSlug: slug, id: organizationId, limit: MEMBERS_PAGE_SIZE, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const roles = useQuery({ queryKey: ['organization-roles', slug], queryFn: () => trpc.organizationRoles.list.query({ tenantSlug: slug }) });
  const update = useMutation({
    mutationFn: (form: FormData) =>
      trpc.organizations.update.mutate({ tenantSlug: slug, id: organizationId, name: formValue(form, 'name'), description: formValue(form, 'description') ?? null }),
    onSuccess: (data) => {
      queryClient.setQueryData(['organization', slug, organizationId], data);
      setResult(t('organizations.saved', { name: data.name }));
      return queryClient.invalidateQueries({ queryKey: ['organizations', slug] });
    },
  });
  const remove = useMutation({
    mutationFn: () => trpc.organizations.delete.mutate({ tenantSlug: slug, id: organizationId }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['organizations', slug] });
      await navigate({ to: '/app/$slug/admin/organizations', params: { slug } });
    },
  });
  const confirm = useConfirm();
  const org = organization.data;
  usePageTitle(org ? org.name : t('organizations.organization'));
  const error = organization.error ?? members.error ?? roles.error ?? remove.error;
  const updateError = update.error ? toFormError(update.error) : null;
  const memberList = members.data?.pages.flatMap((page) => page.items) ?? [];
  const roleList = roles.data?.items ?? [];
  return (
    <main className="page" id="main">
      <p><Link to="/app/$slug/admin/organizations" params={{ slug }}>{t('organizations.backToList')}</Link></p>
      <h1>{org ? org.name : t('organizations.organization')}</h1>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {result && <Notice>{result}</Notice>}
      {org && (
        <>
          <section aria-labelledby="members" className="panel">
            <h2 id="members">{members.hasNextPage ? t('organizations.membersShown', { count: memberList.length }) : t('organizations.members', { count: memberList.length })}</h2>
            {members.data && memberList.length === 0 && <p className="muted">{t('organizations.noMembers')}</p>}
            <ul className="endpoints" aria-label={t('organizations.memberList', { name: org.name })}>
              {memberList.map((member) => (
                <MemberRow
                  key={`${member.user.id} ${member.roles.join(',')}`} slug={slug} organizationId={organizationId} member={member} roles={roleList}
                  onResult={setResult}
                />
              ))}
            </ul>
            {members.hasNextPage && (
              <button type="button" className="secondary" onClick={() => void members.fetchNextPage()} disabled={members.isFetchingNextPage}>
                {t('organizations.moreMembers')}
              </button>
            )}
          </section>
          <OrganizationSso slug={slug} organizationId={organizationId} />
          {roles.data && <AddMember slug={slug} organizationId={organizationId} members={memberList} roles={roleList} onResult={setResult} />}
          {roles.data && <InviteMember slug={slug} organizationId={organizationId} roles={roleList} />}
          <section aria-labelledby="organization-details" className="panel">
            <h2 id="organization-details">{t('organizations.details')}</h2>
            <form
              key={`${org.name} ${org.description ?? ''}`}
              onSubmit={(e) => {
                e.preventDefault();
                update.mutate(new FormData(e.currentTarget));
              }}
            >
              <ErrorAlert error={updateError} />
              <Field label={t('organizations.name')} name="name" defaultValue={org.name} required error={updateError} />
              <Field label={t('organizations.description')} name="description" defaultValue={org.description ?? ''} error={updateError} />
              <p className="muted">{t('organizations.createdOn', { date: when(org.createdAt) })}</p>
              <button type="submit" disabled={update.isPending}>{t('organizations.save')}</button>
              <button
                type="button" className="danger"
                onClick={() => void confirm({ message: t('organizations.deleteConfirm', { name: org.name }), confirmLabel: t('confirmActions.deleteOrganization') }).then((ok) => ok && remove.mutate())}
                disabled={remove.isPending}
              >
                {t('organizations.delete', { name: org.name })}
              </button>
            </form>
          </section>
        </>
      )}
    </main>
  );
}
