import { usePageTitle } from '../hooks';
import { useMutation } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { rememberSession, toFormError, trpc, setTenantCreationToken } from '../api';
import { ErrorAlert, Field, formValue } from '../ui';

/** `/`: what the service is, workspace creation, links to the API reference and sign-in pages. */
export function HomePage() {
  usePageTitle('Tenant Identity');
  const navigate = useNavigate();
  const [slug, setSlug] = useState('');
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
        <p>
          Sign-up, sign-in, multi-factor authentication, sessions, API keys, invites and an audit log for every workspace of
          your SaaS, behind one API.
        </p>
        <p>
          <a href="/docs">API reference</a>
        </p>
      </section>

      <section aria-labelledby="create-heading" className="panel">
        <h2 id="create-heading">Create a workspace</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label="Workspace name" name="name" required error={error} autoComplete="organization" />
          <Field label="Your email" name="email" type="email" required error={error} autoComplete="email" />
          <Field label="Password" name="password" type="password" required error={error} autoComplete="new-password" hint="At least 12 characters." />
          {tokenAsked && (
            <Field
              label="Creation token"
              name="creationToken"
              type="password"
              required
              autoComplete="off"
              hint="Workspace creation on this server is restricted: enter the token its operator gave you."
            />
          )}
          <button type="submit" disabled={create.isPending}>Create workspace</button>
        </form>
      </section>

      <section aria-labelledby="open-heading" className="panel">
        <h2 id="open-heading">Open a workspace</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (slug) void navigate({ to: '/app/$slug/sign-in', params: { slug } });
          }}
        >
          <div className="field">
            <label htmlFor="workspace-slug">Workspace address</label>
            <input id="workspace-slug" value={slug} onChange={(e) => setSlug(e.target.value.trim().toLowerCase())} placeholder="acme-inc" />
          </div>
          <button type="submit">Go to sign-in</button>
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
