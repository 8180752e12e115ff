import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { toFormError, trpc, type RouterInputs, type RouterOutputs } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert, Field, formValue, Notice } from '../ui';

type ApplicationType = RouterInputs['applications']['create']['type'];
type Application = RouterOutputs['applications']['list']['items'][number];

/** The application types, each with the sentence a person picks by (docs/oidc.md "Applications"). */
const TYPES: readonly { value: ApplicationType; label: string; sentence: string }[] = [
  { value: 'web', label: 'Web application', sentence: 'A server-rendered app (Next.js, Express, Rails) that keeps a client secret on its server.' },
  { value: 'spa', label: 'Single-page app', sentence: 'A browser app (React, Vue) with no server of its own: public client, PKCE, no secret.' },
  { value: 'native', label: 'Mobile or desktop app', sentence: 'An installed app: public client, PKCE, and may use its own URL scheme for the redirect.' },
  { value: 'm2m', label: 'Machine to machine', sentence: 'A job or service with no person signing in: client credentials, a client secret.' },
];

/** One URI per line, blank lines ignored. */
const uriLines = (text: string | undefined): string[] => (text ?? '').split('\n').map((line) => line.trim()).filter(Boolean);

/** A read-only value with a Copy button (secrets shown once, client ids, URLs). */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => setCopied(false), [value]);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input id={id} readOnly value={value} className="mono" />
        <button
          type="button"
          className="secondary"
          aria-label={`Copy ${label}`}
          onClick={() => void navigator.clipboard.writeText(value).then(() => setCopied(true))}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}

/** What a developer pastes into their app: the issuer, the discovery URL and the client id. */
function Snippet({ slug, app }: { slug: string; app: Application }) {
  const issuer = `${window.location.origin}/v1/${slug}/oidc`;
  return (
    <div className="snippet">
      <CopyField id={`issuer-${app.id}`} label="Issuer" value={issuer} />
      <CopyField id={`discovery-${app.id}`} label="Discovery URL" value={`${issuer}/.well-known/openid-configuration`} />
      <CopyField id={`client-${app.id}`} label="Client ID" value={app.clientId} />
    </div>
  );
}

/** One application: its snippet, the redirect URIs editor, rotate secret and delete (with confirmation). */
function ApplicationPanel({ slug, app, onChanged }: { slug: string; app: Application; onChanged: () => void }) {
  const [confirmingDelete, setConfirmingDelete] = useState(false);
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
      <h3 id={`app-${app.id}`}>{app.name} <span className="muted">· {TYPES.find((t) => t.value === app.type)?.label}</span></h3>
      <ErrorAlert error={formError} />
      <Snippet slug={slug} app={app} />
      {app.type !== 'm2m' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            update.mutate(new FormData(e.currentTarget));
          }}
        >
          <Field label="Name" name="name" defaultValue={app.name} required error={formError} />
          <div className="field">
            <label htmlFor={`redirects-${app.id}`}>Redirect URIs (one per line)</label>
            <textarea id={`redirects-${app.id}`} name="redirectUris" rows={3} defaultValue={app.redirectUris.join('\n')} />
          </div>
          <div className="field">
            <label htmlFor={`logout-${app.id}`}>Post-logout redirect URIs (one per line)</label>
            <textarea id={`logout-${app.id}`} name="postLogoutRedirectUris" rows={2} defaultValue={app.postLogoutRedirectUris.join('\n')} />
          </div>
          <button type="submit" disabled={update.isPending}>Save {app.name}</button>
          {update.isSuccess && <Notice>Saved.</Notice>}
        </form>
      )}
      <div className="actions">
        {confidential && (
          <button type="button" className="secondary" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
            Rotate secret of {app.name}
          </button>
        )}
        {!confirmingDelete && (
          <button type="button" className="danger" onClick={() => setConfirmingDelete(true)}>Delete {app.name}</button>
        )}
      </div>
      {rotate.data && (
        <div className="created">
          <Notice>The old secret no longer works. Copy the new one now: it is shown only once.</Notice>
          <CopyField id={`secret-${app.id}`} label="New client secret" value={rotate.data.clientSecret} />
        </div>
      )}
      {confirmingDelete && (
        <div role="alertdialog" aria-labelledby={`confirm-${app.id}`} className="confirm">
          <p id={`confirm-${app.id}`}>
            Delete <strong>{app.name}</strong>? People signed in through it are signed out of it and its tokens stop working at once.
          </p>
          <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>Yes, delete {app.name}</button>
          <button type="button" className="secondary" onClick={() => setConfirmingDelete(false)}>Cancel</button>
        </div>
      )}
    </section>
  );
}

/** `/app/{slug}/admin/applications`: the workspace's applications (OpenID Connect clients). */
export function ApplicationsPage() {
  const slug = useSlug();
  const queryClient = useQueryClient();
  const [type, setType] = useState<ApplicationType>('web');
  usePageTitle('Applications');
  const apps = useQuery({ queryKey: ['applications', slug], queryFn: () => trpc.applications.list.query({ tenantSlug: slug }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['applications', slug] });
  const create = useMutation({
    mutationFn: (form: FormData) =>
      trpc.applications.create.mutate({
        tenantSlug: slug, name: formValue(form, 'name') ?? '', type,
        ...(type === 'm2m' ? {} : { redirectUris: uriLines(formValue(form, 'redirectUris')), postLogoutRedirectUris: uriLines(formValue(form, 'postLogoutRedirectUris')) }),
      }),
    onSuccess: refresh,
  });
  const error = create.error ? toFormError(create.error) : null;
  return (
    <main className="page" id="main">
      <h1>Applications</h1>
      <p>
        Each application signs its users in through this workspace with any OpenID Connect library. See the developer guide in
        docs/oidc.md.
      </p>
      <section aria-labelledby="new-app" className="panel">
        <h2 id="new-app">Add an application</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <fieldset>
            <legend>Type</legend>
            {TYPES.map((t) => (
              <div key={t.value} className="choice">
                <input type="radio" id={`type-${t.value}`} name="type" value={t.value} checked={type === t.value} onChange={() => setType(t.value)} />
                <label htmlFor={`type-${t.value}`}><strong>{t.label}</strong> <span className="hint">{t.sentence}</span></label>
              </div>
            ))}
          </fieldset>
          <Field label="Name" name="name" required error={error} />
          {type !== 'm2m' && (
            <>
              <div className="field">
                <label htmlFor="new-redirects">Redirect URIs (one per line)</label>
                <textarea id="new-redirects" name="redirectUris" rows={3} placeholder="https://app.example.com/callback" />
              </div>
              <div className="field">
                <label htmlFor="new-logout">Post-logout redirect URIs (one per line, optional)</label>
                <textarea id="new-logout" name="postLogoutRedirectUris" rows={2} />
              </div>
            </>
          )}
          <button type="submit" disabled={create.isPending}>Add application</button>
        </form>
        {create.data && (
          <div className="created">
            <Notice>{create.data.application.name} is ready.{create.data.clientSecret ? ' Copy the client secret now: it is shown only once.' : ''}</Notice>
            {create.data.clientSecret && <CopyField id="new-client-secret" label="Client secret" value={create.data.clientSecret} />}
            <Snippet slug={slug} app={create.data.application} />
          </div>
        )}
      </section>
      <section aria-labelledby="app-list">
        <h2 id="app-list">Your applications</h2>
        <ErrorAlert error={apps.error ? toFormError(apps.error) : null} />
        {apps.data?.items.length === 0 && <p>No application yet.</p>}
        {apps.data?.items.map((app) => <ApplicationPanel key={app.id} slug={slug} app={app} onChanged={refresh} />)}
      </section>
    </main>
  );
}
