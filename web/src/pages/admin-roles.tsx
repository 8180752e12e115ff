import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { useConfirm } from '../confirm';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert, Field, formValue, Notice } from '../ui';

type Role = RouterOutputs['roles']['list']['items'][number];
type ApiResource = RouterOutputs['apiResources']['list']['items'][number];
type RolePermission = Role['permissions'][number];

/** The value of a permission's checkbox: the resource identifier and the permission name (an identifier holds no space). */
const grantKey = (resource: string, permission: string): string => `${resource} ${permission}`;

/** The checked permissions of a role form, as the API takes them. */
function pickedPermissions(form: FormData): RolePermission[] {
  return form.getAll('grant').flatMap((value) => {
    if (typeof value !== 'string') return [];
    const [resource, permission] = value.split(' ');
    return resource && permission ? [{ resource, permission }] : [];
  });
}

/**
 * The permissions a role may grant, a group of checkboxes per API resource (its name and identifier
 * as the group's legend); `granted` are checked.
 */
function PermissionPicker({ resources, granted, idPrefix }: { resources: readonly ApiResource[]; granted: readonly RolePermission[]; idPrefix: string }) {
  const { t } = useTranslation('admin');
  const slug = useSlug();
  const checked = new Set(granted.map((g) => grantKey(g.resource, g.permission)));
  const withPermissions = resources.filter((resource) => resource.permissions.length > 0);
  if (withPermissions.length === 0) {
    return (
      <p className="muted">
        {t('roles.noPermissionsYet')} <Link to="/app/$slug/admin/api-resources" params={{ slug }}>{t('roles.toApiResources')}</Link>
      </p>
    );
  }
  return (
    <>
      {withPermissions.map((resource) => (
        <fieldset key={resource.id}>
          <legend>{t('roles.permissionsOf', { name: resource.name })} <span className="muted mono legend-detail">{resource.identifier}</span></legend>
          <div className="checks">
            {resource.permissions.map((permission) => {
              const id = `${idPrefix}-${resource.id}-${permission.name}`;
              const key = grantKey(resource.identifier, permission.name);
              return (
                <div key={key} className="field checkbox">
                  <input id={id} type="checkbox" name="grant" value={key} defaultChecked={checked.has(key)} aria-describedby={permission.description ? `${id}-hint` : undefined} />
                  <label htmlFor={id} className="mono">{permission.name}</label>
                  {permission.description && <span id={`${id}-hint`} className="hint">{permission.description}</span>}
                </div>
              );
            })}
          </div>
        </fieldset>
      ))}
    </>
  );
}

/** Holders shown per page of a role's members (the API allows 1 to 200). */
const MEMBERS_PAGE_SIZE = 50;

/**
 * Who holds the role (GET roles/{id}/members, docs/authorization.md "Members of a role"): its users,
 * each linking to the user's page, and its applications, each linking to its place on the
 * applications page; more on request.
 */
function RoleMembers({ slug, role }: { slug: string; role: Role }) {
  const { t } = useTranslation('admin');
  const headingId = `role-members-${role.id}`;
  const members = useInfiniteQuery({
    queryKey: ['role-members', slug, role.id],
    queryFn: ({ pageParam }) => trpc.roles.members.query({ tenantSlug: slug, id: role.id, limit: MEMBERS_PAGE_SIZE, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = members.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <section aria-labelledby={headingId}>
      <h4 id={headingId}>{t('roles.members', { name: role.name })}</h4>
      <ErrorAlert error={members.error ? toFormError(members.error) : null} />
      {members.isSuccess && items.length === 0 && <p className="muted">{t('roles.noMembers')}</p>}
      {items.length > 0 && (
        <ul className="role-members" aria-label={t('roles.membersLabel', { name: role.name })}>
          {items.map((member) =>
            member.type === 'user' ? (
              <li key={`user-${member.user.id}`}>
                <Link to="/app/$slug/admin/users/$userId" params={{ slug, userId: member.user.id }}>{member.user.email}</Link>{' '}
                <span className="muted">· {t('roles.memberUser')}</span>
              </li>
            ) : (
              <li key={`application-${member.application.id}`}>
                <Link to="/app/$slug/admin/applications" params={{ slug }} hash={`app-${member.application.id}`}>{member.application.name}</Link>{' '}
                <span className="muted">· {t('roles.memberApplication')}</span>
              </li>
            ),
          )}
        </ul>
      )}
      {members.hasNextPage && (
        <button type="button" className="secondary" onClick={() => members.fetchNextPage()} disabled={members.isFetchingNextPage}>
          {t('roles.moreMembers')}
        </button>
      )}
    </section>
  );
}

/** Editing one role: name, description and its permissions, saved together (PATCH roles/{id}). */
function RoleEditor({ slug, role, resources, onDone }: { slug: string; role: Role; resources: readonly ApiResource[]; onDone: (message: string) => void }) {
  const { t } = useTranslation('admin');
  const save = useMutation({
    mutationFn: (form: FormData) =>
      trpc.roles.update.mutate({
        tenantSlug: slug, id: role.id, name: formValue(form, 'name'), description: formValue(form, 'description') ?? '', permissions: pickedPermissions(form),
      }),
    onSuccess: (data) => onDone(t('roles.saved', { name: data.role.name })),
  });
  const error = save.error ? toFormError(save.error) : null;
  return (
    <section aria-labelledby={`edit-role-${role.id}`} className="panel">
      <h3 id={`edit-role-${role.id}`}>{t('roles.editing', { name: role.name })}</h3>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        <Field label={t('roles.name')} name="name" defaultValue={role.name} required error={error} />
        <Field label={t('roles.description')} name="description" defaultValue={role.description} error={error} />
        <PermissionPicker resources={resources} granted={role.permissions} idPrefix={`edit-${role.id}`} />
        <button type="submit" disabled={save.isPending}>{t('roles.save', { name: role.name })}</button>
      </form>
      <RoleMembers slug={slug} role={role} />
    </section>
  );
}

/** A role's permissions in words: "read:invoices (Invoices API)", by resource name where known. */
function permissionsInWords(role: Role, resources: readonly ApiResource[]): string {
  const names = new Map(resources.map((r) => [r.identifier, r.name]));
  return role.permissions.map((p) => `${p.permission} (${names.get(p.resource) ?? p.resource})`).join(', ');
}

/**
 * `/app/{slug}/admin/roles`: the workspace's own roles, each a set of permissions of its API
 * resources: list, create, edit, delete (docs/oidc.md "Roles and permissions", docs/web.md "Console").
 */
export function RolesPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('roles.title'));
  const slug = useSlug();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const roles = useQuery({ queryKey: ['roles', slug], queryFn: () => trpc.roles.list.query({ tenantSlug: slug }) });
  const resources = useQuery({ queryKey: ['api-resources', slug], queryFn: () => trpc.apiResources.list.query({ tenantSlug: slug }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['roles', slug] });
  const create = useMutation({
    mutationFn: (input: { form: FormData; element: HTMLFormElement }) =>
      trpc.roles.create.mutate({
        tenantSlug: slug, name: formValue(input.form, 'name') ?? '', description: formValue(input.form, 'description'), permissions: pickedPermissions(input.form),
      }),
    onSuccess: async (data, input) => {
      input.element.reset();
      await refresh();
      setResult(t('roles.created', { name: data.role.name }));
    },
  });
  const remove = useMutation({
    mutationFn: (role: Role) => trpc.roles.delete.mutate({ tenantSlug: slug, id: role.id }),
    onSuccess: async (_data, role) => {
      await refresh();
      setResult(t('roles.deleted', { name: role.name }));
    },
  });
  const confirm = useConfirm();
  const createError = create.error ? toFormError(create.error) : null;
  const listError = roles.error ?? resources.error ?? remove.error;
  const resourceList = resources.data?.items ?? [];
  return (
    <main className="page" id="main">
      <h1>{t('roles.title')}</h1>
      <p>{t('roles.intro')}</p>
      <section aria-labelledby="new-role" className="panel">
        <h2 id="new-role">{t('roles.add')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setResult(null);
            create.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
          }}
        >
          <ErrorAlert error={createError} />
          <Field label={t('roles.name')} name="name" required error={createError} />
          <Field label={t('roles.description')} name="description" error={createError} />
          {resources.data && <PermissionPicker resources={resourceList} granted={[]} idPrefix="new-role" />}
          <button type="submit" disabled={create.isPending}>{t('roles.addButton')}</button>
        </form>
      </section>
      <section aria-labelledby="role-list" className="panel">
        <h2 id="role-list">{t('roles.list')}</h2>
        <ErrorAlert error={listError ? toFormError(listError) : null} />
        {result && <Notice>{result}</Notice>}
        {roles.data?.items.length === 0 && (
          <div className="empty-state">
            <p>{t('roles.emptyWhat')}</p>
            <p>{t('roles.emptyHow')}</p>
          </div>
        )}
        {(roles.data?.items.length ?? 0) > 0 && (
          <div className="table-wrap">
            <table className="cards">
              <thead>
                <tr><th scope="col">{t('roles.name')}</th><th scope="col">{t('roles.description')}</th><th scope="col">{t('roles.permissions')}</th><th scope="col">{t('table.actions')}</th></tr>
              </thead>
              <tbody>
                {roles.data?.items.map((role) => (
                  <tr key={role.id}>
                    <td role="cell">{role.name}</td>
                    <td role="cell" data-label={t('roles.description')}>{role.description || '—'}</td>
                    <td role="cell" data-label={t('roles.permissions')} className="wrap">{role.permissions.length > 0 ? permissionsInWords(role, resourceList) : t('roles.none')}</td>
                    <td role="cell" className="actions">
                      <button
                        type="button" className="secondary" aria-expanded={editing === role.id} aria-label={t('roles.editLabel', { name: role.name })}
                        onClick={() => setEditing(editing === role.id ? null : role.id)}
                      >
                        {t('roles.edit')}
                      </button>
                      <button
                        type="button" className="danger" aria-label={t('roles.deleteLabel', { name: role.name })}
                        onClick={async () => {
                          if (!(await confirm({ message: t('roles.deleteConfirm', { name: role.name }), confirmLabel: t('confirmActions.deleteRole') }))) return;
                          setResult(null);
                          remove.mutate(role);
                        }}
                      >
                        {t('roles.delete')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {roles.data?.items
          .filter((role) => role.id === editing)
          .map((role) => (
            <RoleEditor
              key={role.id} slug={slug} role={role} resources={resourceList}
              onDone={(message) => {
                setEditing(null);
                setResult(message);
                void refresh();
              }}
            />
          ))}
      </section>
    </main>
  );
}

/** Who holds roles: a user (by email) or an `m2m` application (by name). */
export type RoleHolder = { kind: 'user'; id: string; label: string } | { kind: 'application'; id: string; label: string };

/**
 * The roles a user or an `m2m` application holds, each with "Remove", and a picker to give one more.
 * Every change sends the whole new set (PUT users/{id}/roles or applications/{id}/roles); the holder's
 * next token carries it (docs/oidc.md "Roles and permissions").
 */
export function HeldRoles({ slug, holder, Heading = 'h2' }: { slug: string; holder: RoleHolder; Heading?: 'h2' | 'h4' }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const pickerId = `role-picker-${holder.id}`;
  const headingId = `held-roles-${holder.id}`;
  const [picked, setPicked] = useState('');
  const [result, setResult] = useState<string | null>(null);
  const queryKey = ['held-roles', slug, holder.kind, holder.id];
  const held = useQuery({
    queryKey,
    queryFn: () =>
      holder.kind === 'user'
        ? trpc.users.roles.query({ tenantSlug: slug, userId: holder.id })
        : trpc.applications.roles.query({ tenantSlug: slug, id: holder.id }),
  });
  const all = useQuery({ queryKey: ['roles', slug], queryFn: () => trpc.roles.list.query({ tenantSlug: slug }) });
  const change = useMutation({
    mutationFn: ({ roleIds }: { roleIds: string[]; done: string }) =>
      holder.kind === 'user'
        ? trpc.users.setRoles.mutate({ tenantSlug: slug, userId: holder.id, roleIds })
        : trpc.applications.setRoles.mutate({ tenantSlug: slug, id: holder.id, roleIds }),
    onSuccess: (data, { done }) => {
      queryClient.setQueryData(queryKey, data);
      setPicked('');
      setResult(done);
    },
  });
  const heldRoles = held.data?.roles ?? [];
  const heldIds = heldRoles.map((role) => role.id);
  const available = (all.data?.items ?? []).filter((role) => !heldIds.includes(role.id));
  const error = held.error ?? all.error ?? change.error;
  return (
    <section aria-labelledby={headingId}>
      <Heading id={headingId}>{t('heldRoles.title')}</Heading>
      <p className="hint">{holder.kind === 'user' ? t('heldRoles.userHint') : t('heldRoles.applicationHint')}</p>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {result && <Notice>{result}</Notice>}
      {held.data && heldRoles.length === 0 && <p className="muted">{t('heldRoles.none', { name: holder.label })}</p>}
      {heldRoles.length > 0 && (
        <ul className="held-roles" aria-label={t('heldRoles.listLabel', { name: holder.label })}>
          {heldRoles.map((role) => (
            <li key={role.id}>
              <span>{role.name}</span>{' '}
              <button
                type="button" className="secondary" disabled={change.isPending}
                aria-label={t('heldRoles.removeLabel', { role: role.name, name: holder.label })}
                onClick={() => change.mutate({ roleIds: heldIds.filter((id) => id !== role.id), done: t('heldRoles.removed', { role: role.name, name: holder.label }) })}
              >
                {t('heldRoles.remove')}
              </button>
            </li>
          ))}
        </ul>
      )}
      {all.data && all.data.items.length === 0 && (
        <p className="muted">
          {t('heldRoles.noRolesYet')} <Link to="/app/$slug/admin/roles" params={{ slug }}>{t('heldRoles.toRoles')}</Link>
        </p>
      )}
      {available.length > 0 && (
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            const role = available.find((r) => r.id === picked);
            if (!role) return;
            change.mutate({ roleIds: [...heldIds, role.id], done: t('heldRoles.given', { role: role.name, name: holder.label }) });
          }}
        >
          <div className="field">
            <label htmlFor={pickerId}>{t('heldRoles.pick', { name: holder.label })}</label>
            <select id={pickerId} value={picked} onChange={(e) => setPicked(e.target.value)} required>
              <option value="">{t('heldRoles.choose')}</option>
              {available.map((role) => <option key={role.id} value={role.id}>{role.name}</option>)}
            </select>
          </div>
          <button type="submit" className="secondary" disabled={change.isPending}>{t('heldRoles.give')}</button>
        </form>
      )}
    </section>
  );
}
