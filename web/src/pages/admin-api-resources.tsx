import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { useConfirm } from '../confirm';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert, Field, formValue, Notice } from '../ui';

type ApiResource = RouterOutputs['apiResources']['list']['items'][number];

/** One row of the permissions editor: a permission name and what it allows. */
interface PermissionRow {
  /** A key for React only, stable while the row lives. */
  key: number;
  name: string;
  description: string;
}

let nextRowKey = 0;
const newRow = (name = '', description = ''): PermissionRow => ({ key: nextRowKey++, name, description });

/** The rows as the API takes them: blank names dropped, an empty description left out. */
const permissionsOf = (rows: readonly PermissionRow[]) =>
  rows
    .filter((row) => row.name.trim() !== '')
    .map((row) => ({ name: row.name.trim(), ...(row.description.trim() ? { description: row.description.trim() } : {}) }));

/**
 * The snippet of the empty state: docs/authorization.md "Node.js (jose)" with this workspace's issuer,
 * an example identifier and permission: a backend verifying an access token and checking a permission.
 */
export function joseSnippet(issuer: string, identifier: string, permission: string): string {
  return [
    "import { createRemoteJWKSet, jwtVerify } from 'jose';",
    '',
    `const ISSUER = '${issuer}';`,
    `const AUDIENCE = '${identifier}';`,
    'const jwks = createRemoteJWKSet(new URL(`${ISSUER}/jwks`)); // cached, refetched on an unknown kid',
    '',
    'const { payload } = await jwtVerify(token, jwks, { issuer: ISSUER, audience: AUDIENCE, typ: \'at+jwt\' });',
    "const granted = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];",
    `if (!granted.includes('${permission}')) throw Object.assign(new Error('forbidden'), { status: 403 });`,
  ].join('\n');
}

/**
 * Add/remove rows of permission name + description (PATCH api-resources replaces the whole list). Each
 * input is labelled with its row number so a screen reader tells the rows apart.
 */
function PermissionsEditor({ rows, onChange, error }: { rows: PermissionRow[]; onChange: (rows: PermissionRow[]) => void; error: string | null }) {
  const { t } = useTranslation('admin');
  const id = useId();
  const set = (key: number, change: Partial<PermissionRow>) => onChange(rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  return (
    <fieldset aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{t('apiResources.permissions')}</legend>
      <p className="hint">{t('apiResources.permissionsHint')}</p>
      {rows.length === 0 && <p className="muted">{t('apiResources.noPermissions')}</p>}
      {rows.map((row, index) => (
        <div key={row.key} className="permission-row">
          <div className="field">
            <label htmlFor={`${id}-name-${row.key}`}>{t('apiResources.permissionName', { n: index + 1 })}</label>
            <input id={`${id}-name-${row.key}`} className="mono" value={row.name} placeholder="read:invoices" maxLength={64} onChange={(e) => set(row.key, { name: e.target.value })} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-description-${row.key}`}>{t('apiResources.permissionDescription', { n: index + 1 })}</label>
            <input id={`${id}-description-${row.key}`} value={row.description} maxLength={500} onChange={(e) => set(row.key, { description: e.target.value })} />
          </div>
          <button
            type="button" className="secondary"
            aria-label={t('apiResources.removePermissionLabel', { n: index + 1, name: row.name || '—' })}
            onClick={() => onChange(rows.filter((r) => r.key !== row.key))}
          >
            {t('apiResources.removePermission')}
          </button>
        </div>
      ))}
      {error && <p id={`${id}-error`} className="field-error">{error}</p>}
      <button type="button" className="secondary" onClick={() => onChange([...rows, newRow()])}>{t('apiResources.addPermission')}</button>
    </fieldset>
  );
}

/** Editing one resource: its name and its permissions, saved together (PATCH api-resources/{id}). */
function ApiResourceEditor({ slug, resource, onDone }: { slug: string; resource: ApiResource; onDone: (message: string) => void }) {
  const { t } = useTranslation('admin');
  const [rows, setRows] = useState<PermissionRow[]>(() => resource.permissions.map((p) => newRow(p.name, p.description)));
  const save = useMutation({
    mutationFn: (form: FormData) =>
      trpc.apiResources.update.mutate({ tenantSlug: slug, id: resource.id, name: formValue(form, 'name'), permissions: permissionsOf(rows) }),
    onSuccess: (data) => onDone(t('apiResources.saved', { name: data.apiResource.name })),
  });
  const error = save.error ? toFormError(save.error) : null;
  return (
    <section aria-labelledby={`edit-${resource.id}`} className="panel">
      <h3 id={`edit-${resource.id}`}>{t('apiResources.editing', { name: resource.name })}</h3>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        <Field label={t('apiResources.name')} name="name" defaultValue={resource.name} required error={error} />
        <p><span className="muted">{t('apiResources.identifier')}:</span> <code className="mono">{resource.identifier}</code></p>
        <PermissionsEditor rows={rows} onChange={setRows} error={error?.fields.permissions ?? (error?.reason === 'duplicate_permission' ? error.message : null)} />
        <button type="submit" disabled={save.isPending}>{t('apiResources.save', { name: resource.name })}</button>
      </form>
    </section>
  );
}

/** What an API resource is for and how a backend checks its tokens, shown while the workspace has none. */
function EmptyState({ slug }: { slug: string }) {
  const { t } = useTranslation('admin');
  const issuer = `${window.location.origin}/v1/${slug}/oidc`;
  return (
    <div className="empty-state">
      <p>{t('apiResources.emptyWhat')}</p>
      <p>{t('apiResources.emptyHow')}</p>
      <pre className="code" role="region" tabIndex={0} aria-label={t('apiResources.snippetLabel')}>
        <code>{joseSnippet(issuer, 'https://api.example.com/invoices', 'read:invoices')}</code>
      </pre>
    </div>
  );
}

/**
 * `/app/{slug}/admin/api-resources`: the workspace's own APIs (RFC 8707 resources) with their
 * permissions: list, create, edit, delete (docs/oidc.md "Roles and permissions", docs/web.md "Console").
 */
export function ApiResourcesPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('apiResources.title'));
  const slug = useSlug();
  const queryClient = useQueryClient();
  const [rows, setRows] = useState<PermissionRow[]>(() => [newRow()]);
  const [editing, setEditing] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const resources = useQuery({ queryKey: ['api-resources', slug], queryFn: () => trpc.apiResources.list.query({ tenantSlug: slug }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['api-resources', slug] });
  const create = useMutation({
    mutationFn: (input: { form: FormData; element: HTMLFormElement }) =>
      trpc.apiResources.create.mutate({
        tenantSlug: slug, name: formValue(input.form, 'name') ?? '', identifier: formValue(input.form, 'identifier') ?? '', permissions: permissionsOf(rows),
      }),
    onSuccess: async (data, input) => {
      input.element.reset();
      setRows([newRow()]);
      await refresh();
      setResult(t('apiResources.created', { name: data.apiResource.name }));
    },
  });
  const remove = useMutation({
    mutationFn: (resource: ApiResource) => trpc.apiResources.delete.mutate({ tenantSlug: slug, id: resource.id }),
    onSuccess: async (_data, resource) => {
      await refresh();
      setResult(t('apiResources.deleted', { name: resource.name }));
    },
  });
  const confirm = useConfirm();
  const createError = create.error ? toFormError(create.error) : null;
  const listError = resources.error ?? remove.error;
  return (
    <main className="page" id="main">
      <h1>{t('apiResources.title')}</h1>
      <p>{t('apiResources.intro')}</p>
      <section aria-labelledby="new-api-resource" className="panel">
        <h2 id="new-api-resource">{t('apiResources.add')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setResult(null);
            create.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
          }}
        >
          <ErrorAlert error={createError} />
          <Field label={t('apiResources.name')} name="name" required error={createError} />
          <Field label={t('apiResources.identifier')} name="identifier" required error={createError} hint={t('apiResources.identifierHint')} placeholder="https://api.example.com/invoices" />
          <PermissionsEditor rows={rows} onChange={setRows} error={createError?.fields.permissions ?? (createError?.reason === 'duplicate_permission' ? createError.message : null)} />
          <button type="submit" disabled={create.isPending}>{t('apiResources.addButton')}</button>
        </form>
      </section>
      <section aria-labelledby="api-resource-list" className="panel">
        <h2 id="api-resource-list">{t('apiResources.list')}</h2>
        <ErrorAlert error={listError ? toFormError(listError) : null} />
        {result && <Notice>{result}</Notice>}
        {resources.data?.items.length === 0 && <EmptyState slug={slug} />}
        {(resources.data?.items.length ?? 0) > 0 && (
          <div className="table-wrap">
            <table className="cards">
              <thead>
                <tr><th scope="col">{t('apiResources.name')}</th><th scope="col">{t('apiResources.identifier')}</th><th scope="col">{t('apiResources.permissionCount')}</th><th scope="col">{t('table.actions')}</th></tr>
              </thead>
              <tbody>
                {resources.data?.items.map((resource) => (
                  <tr key={resource.id}>
                    <td role="cell">{resource.name}</td>
                    <td role="cell" data-label={t('apiResources.identifier')} className="mono wrap">{resource.identifier}</td>
                    <td role="cell" data-label={t('apiResources.permissionCount')}>
                      <span title={resource.permissions.map((p) => p.name).join(', ')}>{resource.permissions.length}</span>
                    </td>
                    <td role="cell" className="actions">
                      <button
                        type="button" className="secondary" aria-expanded={editing === resource.id}
                        aria-label={t('apiResources.editLabel', { name: resource.name })}
                        onClick={() => setEditing(editing === resource.id ? null : resource.id)}
                      >
                        {t('apiResources.edit')}
                      </button>
                      <button
                        type="button" className="danger" aria-label={t('apiResources.deleteLabel', { name: resource.name })}
                        onClick={async () => {
                          if (!(await confirm({ message: t('apiResources.deleteConfirm', { name: resource.name }), confirmLabel: t('confirmActions.deleteApiResource') }))) return;
                          setResult(null);
                          remove.mutate(resource);
                        }}
                      >
                        {t('apiResources.delete')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {resources.data?.items
          .filter((resource) => resource.id === editing)
          .map((resource) => (
            <ApiResourceEditor
              key={resource.id} slug={slug} resource={resource}
              onDone={(message) => {
                setEditing(null);
                setResult(message);
                void refresh();
              }}
            />
          ))}
        {(resources.data?.items.length ?? 0) > 0 && (
          <p className="hint">
            {t('apiResources.rolesHint')} <Link to="/app/$slug/admin/roles" params={{ slug }}>{t('apiResources.toRoles')}</Link>
          </p>
        )}
      </section>
    </main>
  );
}
