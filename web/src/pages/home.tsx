import { usePageTitle } from '../hooks';
import { useMutation } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { rememberSession, toFormError, trpc, setTenantCreationToken } from '../api';
import { slugify } from '../../../src/lib/slug.js';
import { ErrorAlert, Field, formValue } from '../ui';

/** `/`: what the service is, workspace creation, links to the API reference and sign-in pages. */
export function HomePage() {
  const { t } = useTranslation('auth');
  usePageTitle('Tenant Identity'); // the product's name, in every language
  const navigate = useNavigate();
  // "Open a workspace": a typed name becomes its slug the way workspace creation makes it (Acme Inc. → acme-inc)
  const [typed, setTyped] = useState('');
  const slug = slugify(typed);
  const create = useMutation({
    mutationFn: (form: FormData) => {
      setTenantCreationToken(formValue(form, 'creationToken'));
      return trpc.tenants.create.mutate({
        tenant: { name: formValue(form, 'name') ?? '' },
        admin: { email: formValue(form, 'email') ?? '', password: formValue(form, 'password') ?? '' },
      });
    },
    onSuccess: async (session) => {
      rememberSession(session.tenantSlug, session);
      await navigate({ to: '/app/$slug/account', params: { slug: session.tenantSlug } });
    },
  });
  const error = create.error ? toFormError(create.error) : null;
  // the deployment restricts workspace creation (TENANT_CREATION_TOKEN): ask for the token
  const [tokenAsked, setTokenAsked] = useState(false);
  if (error?.reason === 'tenant_creation_token_required' && !tokenAsked) setTokenAsked(true);

  return (
    <main className="home" id="main">
      <section className="intro">
        <h1>tenant-identity</h1>
        <p>{t('home.intro')}</p>
        <p>
          <a href="/docs">{t('home.apiReference')}</a>
        </p>
      </section>

      <section aria-labelledby="create-heading" className="panel">
        <h2 id="create-heading">{t('home.create')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label={t('home.workspaceName')} name="name" required error={error} autoComplete="organization" />
          <Field label={t('home.yourEmail')} name="email" type="email" required error={error} autoComplete="email" />
          <Field label={t('fields.password')} name="password" type="password" required error={error} autoComplete="new-password" hint={t('fields.passwordHint')} />
          {tokenAsked && (
            <Field
              label={t('home.creationToken')}
              name="creationToken"
              type="password"
              required
              autoComplete="off"
              hint={t('home.creationTokenHint')}
            />
          )}
          <button type="submit" disabled={create.isPending}>{t('home.createButton')}</button>
        </form>
      </section>

      <section aria-labelledby="open-heading" className="panel">
        <h2 id="open-heading">{t('home.open')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (slug) void navigate({ to: '/app/$slug/sign-in', params: { slug } });
          }}
        >
          <div className="field">
            <label htmlFor="workspace-slug">{t('home.workspaceAddress')}</label>
            <input
              id="workspace-slug" value={typed} onChange={(e) => setTyped(e.target.value)} placeholder="acme-inc" aria-describedby="workspace-slug-hint"
              autoComplete="organization"
            />
            <p id="workspace-slug-hint" className="hint">{t('home.workspaceAddressHint')}</p>
          </div>
          <button type="submit">{t('home.goToSignIn')}</button>
        </form>
        {slug && (
          <p>
            <Link to="/app/$slug/sign-in" params={{ slug }}>/app/{slug}/sign-in</Link>
          </p>
        )}
      </section>
    </main>
  );
}
