import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type RouterInputs, type RouterOutputs } from '../api';
import { useConfirm } from '../confirm';
import { usePageTitle, useSlug } from '../hooks';
import { CopyField, ErrorAlert, Field, formValue, Notice } from '../ui';
import { HeldRoles } from './admin-roles';

type ApplicationType = RouterInputs['applications']['create']['type'];
type Application = RouterOutputs['applications']['list']['items'][number];

/** The application types; each has a name and the sentence a person picks by in the `admin` catalog (docs/oidc.md "Applications"). */
const TYPES: readonly ApplicationType[] = ['web', 'spa', 'native', 'm2m'];

/** One URI per line, blank lines ignored. */
const uriLines = (text: string | undefined): string[] => (text ?? '').split('\n').map((line) => line.trim()).filter(Boolean);

/** What a developer pastes into their app: the issuer, the discovery URL and the client id. */
function Snippet({ slug, app }: { slug: string; app: Application }) {
  const { t } = useTranslation('admin');
  const issuer = `${window.location.origin}/v1/${slug}/oidc`;
  return (
    <div className="snippet">
      <CopyField id={`issuer-${app.id}`} label={t('applications.issuer')} value={issuer} />
      <CopyField id={`discovery-${app.id}`} label={t('applications.discovery')} value={`${issuer}/.well-known/openid-configuration`} />
      <CopyField id={`client-${app.id}`} label={t('applications.clientId')} value={app.clientId} />
    </div>
  );
}

/** One application: its snippet, the redirect URIs editor, rotate secret and delete (with confirmation). */
function ApplicationPanel({ slug, app, onChanged }: { slug: string; app: Application; onChanged: () => void }) {
  const { t } = useTranslation('admin');
  const confirm = useConfirm();
  const update = useMutation({
    mutationFn: (form: FormData) =>
      trpc.applications.update.mutate({
        tenantSlug: slug, id: app.id, name: formValue(form, 'name'),
        redirectUris: uriLines(formValue(form, 'redirectUris')), postLogoutRedirectUris: uriLines(formValue(form, 'postLogoutRedirectUris')),
      }),
    onSuccess: onChanged,
  });
  const rotate = useMutation({ mutationFn: () => trpc.applications.rotateSecret.mutate({ tenantSlug: slug, id: app.id }) });
  const remove = useMutation({ mutationFn: () => trpc.applications.delete.mutate({ tenantSlug: slug, id: app.id }), onSuccess: onChanged });
  const error = update.error ?? rotate.error ?? remove.error;
  const formError = error ? toFormError(error) : null;
  const confidential = app.type === 'web' || app.type === 'm2m';
  return (
    <section aria-labelledby={`app-${app.id}`} className="panel">
      <h3 id={`app-${app.id}`}>{app.name} <span className="muted">· {t(`applications.types.${app.type}`)}</span></h3>
      <ErrorAlert error={formError} />
      <Snippet slug={slug} app={app} />
      {app.type !== 'm2m' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            update.mutate(new FormData(e.currentTarget));
          }}
        >
          <Field label={t('applications.name')} name="name" defaultValue={app.name} required error={formError} />
          <div className="field">
            <label htmlFor={`redirects-${app.id}`}>{t('applications.redirectUris')}</label>
            <textarea id={`redirects-${app.id}`} name="redirectUris" rows={3} defaultValue={app.redirectUris.join('\n')} />
          </div>
          <div className="field">
            <label htmlFor={`logout-${app.id}`}>{t('applications.logoutUris')}</label>
            <textarea id={`logout-${app.id}`} name="postLogoutRedirectUris" rows={2} defaultValue={app.postLogoutRedirectUris.join('\n')} />
          </div>
          <button type="submit" disabled={update.isPending}>{t('applications.save', { name: app.name })}</button>
          {update.isSuccess && <Notice>{t('applications.saved')}</Notice>}
        </form>
      )}
      {app.type === 'm2m' && <HeldRoles slug={slug} holder={{ kind: 'application', id: app.id, label: app.name }} Heading="h4" />}
      <div className="actions">
        {confidential && (
          <button type="button" className="secondary" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
            {t('applications.rotate', { name: app.name })}
          </button>
        )}
        <button
          type="button" className="danger" disabled={remove.isPending}
          onClick={() => void confirm({ message: t('applications.confirmDelete', { name: app.name }), confirmLabel: t('confirmActions.deleteApplication') }).then((ok) => ok && remove.mutate())}
        >
          {t('applications.delete', { name: app.name })}
        </button>
      </div>
      {rotate.data && (
        <div className="created">
          <Notice>{t('applications.rotated')}</Notice>
          <CopyField id={`secret-${app.id}`} label={t('applications.newSecret')} value={rotate.data.clientSecret} />
        </div>
      )}
    </section>
  );
}

/**
 * How an app signs people in through this workspace (docs/oidc.md, which the service does not serve):
 * the steps, the issuer and discovery URL to copy, and the applications section of the API reference
 * (`/docs`, Swagger UI, deep-linked to its `applications` tag).
 */
function OidcGuide({ slug }: { slug: string }) {
  const { t } = useTranslation('admin');
  const issuer = `${window.location.origin}/v1/${slug}/oidc`;
  return (
    <section aria-labelledby="oidc-guide" className="panel">
      <h2 id="oidc-guide">{t('applications.guide.title')}</h2>
      <ol className="steps">
        <li>{t('applications.guide.step1')}</li>
        <li>{t('applications.guide.step2')}</li>
        <li>{t('applications.guide.step3')}</li>
        <li>{t('applications.guide.step4')}</li>
      </ol>
      <CopyField id="guide-issuer" label={t('applications.issuer')} value={issuer} />
      <CopyField id="guide-discovery" label={t('applications.discovery')} value={`${issuer}/.well-known/openid-configuration`} />
      <p className="hint">
        {t('applications.guide.referenceHint')} <a href="/docs#/applications">{t('applications.guide.reference')}</a>
      </p>
    </section>
  );
}

/** `/app/{slug}/admin/applications`: the workspace's applications (OpenID Connect clients) and how an app signs in with one. */
export function ApplicationsPage() {
  const slug = useSlug();
  const queryClient = useQueryClient();
  const [type, setType] = useState<ApplicationType>('web');
  const { t } = useTranslation('admin');
  usePageTitle(t('applications.title'));
  const apps = useQuery({ queryKey: ['applications', slug], queryFn: () => trpc.applications.list.query({ tenantSlug: slug }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['applications', slug] });
  const create = useMutation({
    mutationFn: ({ form }: { form: FormData; element: HTMLFormElement }) =>
      trpc.applications.create.mutate({
        tenantSlug: slug, name: formValue(form, 'name') ?? '', type,
        ...(type === 'm2m' ? {} : { redirectUris: uriLines(formValue(form, 'redirectUris')), postLogoutRedirectUris: uriLines(formValue(form, 'postLogoutRedirectUris')) }),
      }),
    onSuccess: (_data, { element }) => {
      // the form empties for the next one; the new application's secret and snippet stay below it
      element.reset();
      setType('web');
      return refresh();
    },
  });
  const error = create.error ? toFormError(create.error) : null;
  return (
    <main className="page" id="main">
      <h1>{t('applications.title')}</h1>
      <p>{t('applications.intro')}</p>
      <OidcGuide slug={slug} />
      <section aria-labelledby="new-app" className="panel">
        <h2 id="new-app">{t('applications.add')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate({ form: new FormData(e.currentTarget), element: e.currentTarget });
          }}
        >
          <ErrorAlert error={error} />
          <fieldset>
            <legend>{t('applications.type')}</legend>
            {TYPES.map((value) => (
              <div key={value} className="choice">
                <input type="radio" id={`type-${value}`} name="type" value={value} checked={type === value} onChange={() => setType(value)} />
                <label htmlFor={`type-${value}`}>
                  <strong>{t(`applications.types.${value}`)}</strong> <span className="hint">{t(`applications.types.${value}Sentence`)}</span>
                </label>
              </div>
            ))}
          </fieldset>
          <Field label={t('applications.name')} name="name" required error={error} />
          {type !== 'm2m' && (
            <>
              <div className="field">
                <label htmlFor="new-redirects">{t('applications.redirectUris')}</label>
                <textarea id="new-redirects" name="redirectUris" rows={3} placeholder="https://app.example.com/callback" />
              </div>
              <div className="field">
                <label htmlFor="new-logout">{t('applications.logoutUrisOptional')}</label>
                <textarea id="new-logout" name="postLogoutRedirectUris" rows={2} />
              </div>
            </>
          )}
          <button type="submit" disabled={create.isPending}>{t('applications.addButton')}</button>
        </form>
        {create.data && (
          <div className="created">
            <Notice>{t('applications.ready', { name: create.data.application.name })}{create.data.clientSecret ? t('applications.copySecretNow') : ''}</Notice>
            {create.data.clientSecret && <CopyField id="new-client-secret" label={t('applications.clientSecret')} value={create.data.clientSecret} />}
            <Snippet slug={slug} app={create.data.application} />
          </div>
        )}
      </section>
      <section aria-labelledby="app-list">
        <h2 id="app-list">{t('applications.list')}</h2>
        <ErrorAlert error={apps.error ? toFormError(apps.error) : null} />
        {apps.data?.items.length === 0 && <p>{t('applications.none')}</p>}
        {apps.data?.items.map((app) => <ApplicationPanel key={app.id} slug={slug} app={app} onChanged={refresh} />)}
      </section>
    </main>
  );
}
