import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { usePageTitle, useSignInOptions, useSlug } from '../hooks';
import { Card, ErrorAlert, Field, formValue, Notice } from '../ui';
import { useSignedInNavigation } from './auth-hooks';
import { WorkspaceLine } from './auth-parts';

/**
 * `/app/{slug}/sign-up`: a Member account with email and password, as the workspace's settings allow
 * (`sign-in-options`): no form under `InviteOnly`, the allowed domains named under `Domains`, the
 * workspace's minimum password length in the hint.
 */
export function SignUpPage() {
  const { t, i18n } = useTranslation('auth');
  usePageTitle(t('signUp.title'));
  const slug = useSlug();
  const options = useSignInOptions(slug);
  const onSignedIn = useSignedInNavigation(slug);
  const [pendingEmail, setPendingEmail] = useState<string | null>(null);
  const signup = useMutation({
    mutationFn: (form: FormData) =>
      trpc.auth.signup.mutate({ tenantSlug: slug, email: formValue(form, 'email') ?? '', password: formValue(form, 'password') ?? '' }),
    onSuccess: async (session) => {
      if (session.user.status === 'Pending') setPendingEmail(session.user.email);
      else await onSignedIn(session);
    },
  });
  const error = signup.error ? toFormError(signup.error) : null;
  if (pendingEmail) {
    return (
      <Card title={t('signUp.checkEmail')}>
        <Notice>{t('signUp.verificationSent', { email: pendingEmail })}</Notice>
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
      </Card>
    );
  }
  if (options.data?.signupPolicy === 'InviteOnly') {
    return (
      <Card title={t('signUp.title')}>
        <WorkspaceLine slug={slug} />
        <p>{t('signUp.inviteOnly')}</p>
        <nav aria-label={t('nav.accountHelp')} className="links">
          <Link to="/app/$slug/sign-in" params={{ slug }}>{t('signUp.haveAccount')}</Link>
        </nav>
      </Card>
    );
  }
  const domains = options.data?.signupPolicy === 'Domains' ? options.data.signupEmailDomains : [];
  return (
    <Card title={t('signUp.title')}>
      <WorkspaceLine slug={slug} />
      {domains.length > 0 && <p>{t('signUp.domains', { domains: new Intl.ListFormat(i18n.language, { type: 'disjunction' }).format(domains) })}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          signup.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        <Field label={t('fields.email')} name="email" type="email" autoComplete="username" required error={error} />
        <Field
          label={t('fields.password')} name="password" type="password" autoComplete="new-password" required error={error}
          hint={t('fields.passwordHintMin', { min: options.data?.passwordMinLength ?? 12 })}
        />
        <button type="submit" disabled={signup.isPending}>{t('signUp.submit')}</button>
      </form>
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('signUp.haveAccount')}</Link>
      </nav>
    </Card>
  );
}
