import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { Card, ErrorAlert, Field, formValue, Notice } from '../ui';

/** `/app/{slug}/forgot-password`: asks for a reset link (the answer never says whether the account exists). */
export function ForgotPasswordPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('forgot.pageTitle'));
  const slug = useSlug();
  const request = useMutation({
    mutationFn: (form: FormData) => trpc.auth.requestPasswordReset.mutate({ tenantSlug: slug, email: formValue(form, 'email') ?? '' }),
  });
  const error = request.error ? toFormError(request.error) : null;
  return (
    <Card title={t('forgot.title')}>
      {request.isSuccess ? (
        <Notice>{t('forgot.sent')}</Notice>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            request.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label={t('fields.email')} name="email" type="email" autoComplete="username" required error={error} />
          <button type="submit" disabled={request.isPending}>{t('forgot.submit')}</button>
        </form>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.backToSignIn')}</Link>
      </nav>
    </Card>
  );
}
