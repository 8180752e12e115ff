import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { useLinkToken, usePageTitle, useSlug } from '../hooks';
import { Card, ErrorAlert, Notice } from '../ui';

/**
 * `/app/{slug}/verify-email?token=…` (the mailed link): verifies on a button press, not on load, so
 * that a mail scanner opening the link does not spend it.
 */
export function VerifyEmailPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('verify.pageTitle'));
  const slug = useSlug();
  const token = useLinkToken();
  const verify = useMutation({ mutationFn: () => trpc.auth.verifyEmail.mutate({ tenantSlug: slug, token: token ?? '' }) });
  const error = verify.error ? toFormError(verify.error) : null;
  return (
    <Card title={t('verify.title')}>
      <ErrorAlert error={error} />
      {verify.isSuccess ? (
        <Notice>{t('verify.done')}</Notice>
      ) : token ? (
        <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>{t('verify.submit')}</button>
      ) : (
        <div role="alert" className="alert">{t('verify.incomplete')}</div>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.signIn')}</Link>
      </nav>
    </Card>
  );
}
