import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { useLinkToken, usePageTitle, useSlug } from '../hooks';
import { Card, ErrorAlert, Notice } from '../ui';

/**
 * `/app/{slug}/confirm-email?token=…` (the link mailed to a new address, POST me/email): confirms the
 * change on a button press, not on load, so a mail scanner opening the link does not spend it.
 */
export function ConfirmEmailChangePage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('confirmEmail.title'));
  const slug = useSlug();
  const token = useLinkToken();
  const queryClient = useQueryClient();
  const confirm = useMutation({
    mutationFn: () => trpc.auth.confirmEmailChange.mutate({ tenantSlug: slug, token: token ?? '' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['me', slug] }),
  });
  const error = confirm.error ? toFormError(confirm.error) : null;
  return (
    <Card title={t('confirmEmail.title')}>
      <ErrorAlert error={error} />
      {confirm.data ? (
        <Notice>{t('confirmEmail.done', { email: confirm.data.email })}</Notice>
      ) : token ? (
        <button type="button" onClick={() => confirm.mutate()} disabled={confirm.isPending}>{t('confirmEmail.submit')}</button>
      ) : (
        <div role="alert" className="alert">{t('confirmEmail.incomplete')}</div>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/account" params={{ slug }}>{t('nav.yourAccount')}</Link>
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
      </nav>
    </Card>
  );
}
