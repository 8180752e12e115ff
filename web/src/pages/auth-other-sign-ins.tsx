import { startAuthentication } from '@simplewebauthn/browser';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { PasskeyPromptError, toFormError, toPasskeyError, trpc } from '../api';
import { ErrorAlert } from '../ui';
import type { useSignedInNavigation } from './auth-hooks';

/** "Use a passkey" on the sign-in page: a discoverable-credential ceremony, no email typed (docs/passkeys.md). */
export function PasskeySignInButton({ slug, onSignedIn }: { slug: string; onSignedIn: ReturnType<typeof useSignedInNavigation> }) {
  const { t } = useTranslation('auth');
  const signIn = useMutation({
    mutationFn: async () => {
      const { challengeId, options } = await trpc.auth.passkeyOptions.mutate({ tenantSlug: slug });
      const response = await startAuthentication({ optionsJSON: options }).catch((err: unknown) => {
        throw new PasskeyPromptError(err, options.rpId);
      });
      return trpc.auth.passkeyVerify.mutate({ tenantSlug: slug, challengeId, response });
    },
    onSuccess: (session) => onSignedIn(session),
  });
  return (
    <div className="passkey-sign-in">
      <ErrorAlert error={signIn.error ? toPasskeyError(signIn.error) : null} />
      <button type="button" className="secondary" onClick={() => signIn.mutate()} disabled={signIn.isPending}>{t('signIn.usePasskey')}</button>
    </div>
  );
}

/**
 * "Sign in with the identity provider", shown when the workspace has it configured (`idp.signInOptions`).
 * `browser.idpStart` binds the sign-in to this browser (HttpOnly cookie) and gives the provider URL to
 * open; the provider returns to `/app/{slug}/idp-callback` (docs/web.md "Sign-in with the identity provider").
 */
export function IdpSignInButton({ slug }: { slug: string }) {
  const { t } = useTranslation('auth');
  const options = useQuery({ queryKey: ['sign-in-options', slug], queryFn: () => trpc.idp.signInOptions.query({ tenantSlug: slug }) });
  const start = useMutation({
    mutationFn: () => trpc.browser.idpStart.mutate({ tenantSlug: slug }),
    onSuccess: ({ authorizationUrl }) => window.location.assign(authorizationUrl),
  });
  if (!options.data?.idpSignIn) return null;
  return (
    <div className="idp">
      <ErrorAlert error={start.error ? toFormError(start.error) : null} />
      <p className="muted">{t('signIn.or')}</p>
      <button type="button" className="secondary" onClick={() => start.mutate()} disabled={start.isPending || start.isSuccess}>
        {t('signIn.withProvider')}
      </button>
    </div>
  );
}
