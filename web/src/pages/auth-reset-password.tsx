import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { useLinkToken, usePageTitle, useSlug } from '../hooks';
import { Card, ErrorAlert, Field, formValue, Notice } from '../ui';

/** `/app/{slug}/reset-password?token=…` (the mailed link): sets a new password; every session ends. */
export function ResetPasswordPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('reset.title'));
  const slug = useSlug();
  const token = useLinkToken();
  const complete = useMutation({
    mutationFn: (form: FormData) =>
      trpc.auth.completePasswordReset.mutate({ tenantSlug: slug, token: token ?? '', newPassword: formValue(form, 'newPassword') ?? '' }),
  });
  const error = complete.error ? toFormError(complete.error) : null;
  return (
    <Card title={t('reset.title')}>
      {complete.isSuccess ? (
        <Notice>{t('reset.done')}</Notice>
      ) : !token ? (
        <div role="alert" className="alert">{t('reset.incomplete')}</div>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            complete.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={error} />
          <Field label={t('fields.newPassword')} name="newPassword" type="password" autoComplete="new-password" required error={error} hint={t('fields.passwordHint')} />
          <button type="submit" disabled={complete.isPending}>{t('reset.submit')}</button>
        </form>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
        <Link to="/app/$slug/forgot-password" params={{ slug }}>{t('reset.newLink')}</Link>
      </nav>
    </Card>
  );
}
