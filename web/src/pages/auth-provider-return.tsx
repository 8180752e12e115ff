import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import type { FormError } from '../api';
import { Card, ErrorAlert } from '../ui';
import { factorsOf, SecondFactorWithToken } from './auth-second-factor';

/**
 * What a page the browser returns to from an identity provider shows: that it is signing in, the
 * refusal in words, or the second factor the workspace asks for (`mfa_required`); a page opened
 * without the provider's answer (`arrived` false) says where to start instead.
 */
export function ProviderReturn({ slug, arrived, error, onSignedIn }: {
  slug: string;
  arrived: boolean;
  error: FormError | null;
  onSignedIn: (session: { accessToken: string; accessTokenExpiresIn: number }) => Promise<void>;
}) {
  const { t } = useTranslation('auth');
  const mfaToken = error?.reason === 'mfa_required' && typeof error.details.mfaToken === 'string' ? error.details.mfaToken : null;
  if (mfaToken) return <SecondFactorWithToken slug={slug} mfaToken={mfaToken} factors={factorsOf(error)} onSignedIn={onSignedIn} />;
  return (
    <Card title={t('idpCallback.title')}>
      {!arrived ? (
        <div role="alert" className="alert">{t('idpCallback.notFromProvider')}</div>
      ) : error ? (
        <ErrorAlert error={error} />
      ) : (
        <p role="status" className="loading">{t('idpCallback.signingIn')}</p>
      )}
      <nav aria-label={t('nav.accountHelp')} className="links">
        <Link to="/app/$slug/sign-in" params={{ slug }}>{t('nav.backToSignIn')}</Link>
      </nav>
    </Card>
  );
}
