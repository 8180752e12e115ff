import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { reasonAsFormError, rememberSession, toFormError, trpc } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { hasInteraction } from '../oidc-interaction';
import { useSignedInNavigation } from './auth-hooks';
import { ProviderReturn } from './auth-provider-return';

/**
 * `/app/{slug}/sso-callback#code=…` (or `#error=<reason>`): where the assertion consumer service sends
 * the browser after the company's identity provider answered (docs/sso.md). Reads the fragment once,
 * removes it from the address bar, and completes the sign-in with `browser.ssoComplete` (the
 * browser's binding cookie goes with it); asks for a second factor when the workspace wants one; then
 * goes back to the application that asked for the sign-in, or to the `returnTo` path, or the account.
 */
export function SsoCallbackPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('idpCallback.pageTitle'));
  const slug = useSlug();
  const onSignedIn = useSignedInNavigation(slug);
  const [fragment] = useState(() => new URLSearchParams(window.location.hash.replace(/^#/, '')));
  const code = fragment.get('code');
  const refused = fragment.get('error');
  const started = useRef(false);
  const complete = useMutation({
    mutationFn: () => trpc.browser.ssoComplete.mutate({ tenantSlug: slug, code: code ?? '' }),
    onSuccess: async (session) => {
      if (session.returnTo && !hasInteraction(slug)) {
        rememberSession(slug, session);
        window.location.assign(session.returnTo);
        return;
      }
      await onSignedIn(session);
    },
  });
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(window.history.state, '', window.location.pathname);
    if (started.current || !code) return;
    started.current = true;
    complete.mutate();
  }, [complete, code]);

  const error = complete.error ? toFormError(complete.error) : refused ? reasonAsFormError(refused) : null;
  return <ProviderReturn slug={slug} arrived={Boolean(code || refused)} error={error} onSignedIn={onSignedIn} />;
}
