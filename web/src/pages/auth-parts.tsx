import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { useSignInOptions } from '../hooks';
import { ErrorAlert, Notice } from '../ui';

/** The workspace a hosted page belongs to, by its display name (the slug until it has loaded). */
export function WorkspaceLine({ slug }: { slug: string }) {
  const { t } = useTranslation('auth');
  const options = useSignInOptions(slug);
  return <p className="muted">{t('workspaceLine', { name: options.data?.branding.displayName ?? slug })}</p>;
}

/**
 * "Resend link": mails a new verification link (auth/request-email-verification, which answers the
 * same whether or not the account exists). On the sign-in page after `email_not_verified`, and on the
 * account page of a user whose address is not verified.
 */
export function ResendVerification({ slug, email }: { slug: string; email: string }) {
  const { t } = useTranslation('auth');
  const resend = useMutation({ mutationFn: () => trpc.auth.requestEmailVerification.mutate({ tenantSlug: slug, email }) });
  return (
    <div className="resend-verification">
      <ErrorAlert error={resend.error ? toFormError(resend.error) : null} />
      {resend.isSuccess ? (
        <Notice>{t('resend.sent', { email })}</Notice>
      ) : (
        <button type="button" className="secondary" onClick={() => resend.mutate()} disabled={resend.isPending}>{t('resend.button')}</button>
      )}
    </div>
  );
}
