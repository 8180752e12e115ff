import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { useLinkToken, usePageTitle, useSignedIn, useSlug } from '../hooks';
import { rememberPendingInvite, takePendingInvite } from '../pending-invite';
import { Card, ErrorAlert, Field, formValue } from '../ui';
import { useSignedInNavigation } from './auth-hooks';
import { WorkspaceLine } from './auth-parts';

/**
 * `/app/{slug}/accept-invite?token=…`: a new person chooses a password and joins (POST
 * invites/accept). A person who has an account (an invitation into an organization, docs/organizations.md)
 * signs in first and accepts as themselves (POST me/invites/accept): the link is kept in the tab
 * across the sign-in, and the page offers "Accept as {email}" once signed in.
 */
export function AcceptInvitePage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('invite.title'));
  const slug = useSlug();
  const linkToken = useLinkToken();
  const [token] = useState(() => linkToken ?? takePendingInvite(slug));
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const onSignedIn = useSignedInNavigation(slug);
  const signedIn = useSignedIn(slug);
  const me = useQuery({ queryKey: ['me', slug], queryFn: () => trpc.me.get.query({ tenantSlug: slug }), enabled: signedIn.data === true });
  const accept = useMutation({
    mutationFn: (form: FormData) => trpc.invites.accept.mutate({ token: token ?? '', password: formValue(form, 'password') ?? '' }),
    onSuccess: (session) => onSignedIn(session, session.tenantSlug),
  });
  const acceptSignedIn = useMutation({
    mutationFn: () => trpc.me.acceptInvite.mutate({ tenantSlug: slug, token: token ?? '' }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['my-organizations', slug] });
      await navigate({ to: '/app/$slug/account', params: { slug } });
    },
  });
  const signInToAccept = async () => {
    if (token) rememberPendingInvite(slug, token);
    await navigate({ to: '/app/$slug/sign-in', params: { slug } });
  };
  const error = accept.error ? toFormError(accept.error) : null;
  const signedInError = acceptSignedIn.error ? toFormError(acceptSignedIn.error) : null;
  if (!token) {
    return (
      <Card title={t('invite.title')}>
        <div role="alert" className="alert">{t('invite.incomplete')}</div>
      </Card>
    );
  }
  const asMe = signedIn.data === true && me.data ? me.data : null;
  return (
    <Card title={t('invite.title')}>
      <WorkspaceLine slug={slug} />
      {asMe && (
        <section aria-labelledby="accept-as">
          <h2 id="accept-as">{t('invite.signedInAs', { email: asMe.email })}</h2>
          <ErrorAlert error={signedInError} />
          <button type="button" onClick={() => acceptSignedIn.mutate()} disabled={acceptSignedIn.isPending}>
            {t('invite.acceptAs', { email: asMe.email })}
          </button>
        </section>
      )}
      <form
        aria-labelledby={asMe ? 'accept-new' : undefined}
        onSubmit={(e) => {
          e.preventDefault();
          accept.mutate(new FormData(e.currentTarget));
        }}
      >
        {asMe && <h2 id="accept-new">{t('invite.orNewAccount')}</h2>}
        <ErrorAlert error={error} />
        <Field label={t('fields.choosePassword')} name="password" type="password" autoComplete="new-password" required error={error} hint={t('fields.passwordHint')} />
        <button type="submit" disabled={accept.isPending}>{t('invite.submit')}</button>
      </form>
      {!asMe && (
        <p className="muted">
          {t('invite.haveAccount')}{' '}
          <button type="button" className="link" onClick={() => void signInToAccept()}>{t('invite.signInToAccept')}</button>
        </p>
      )}
    </Card>
  );
}
