import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { useSignedInNavigation } from './auth-hooks';
import { ProviderReturn } from './auth-provider-return';

type CallbackParams = Partial<Record<'code' | 'state' | 'error' | 'error_description' | 'iss', string>>;

/** The authorization response the server put in the fragment (`#code=…&state=…`); nothing else is read. */
function callbackParamsOf(hash: string): CallbackParams {
  const fragment = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const params: CallbackParams = {};
  for (const name of ['code', 'state', 'error', 'error_description', 'iss'] as const) {
    const value = fragment.get(name);
    if (value !== null) params[name] = value;
  }
  return params;
}

/**
 * `/app/{slug}/idp-callback#code=…&state=…`: where the service sends the browser back from the provider.
 * Reads the parameters once, removes them from the address bar, and completes the sign-in with
 * `browser.idpCallback` (the browser's binding cookie goes with it); when the workspace asks for a
 * second factor, asks for it and finishes with `auth.mfaComplete`.
 */
export function IdpCallbackPage() {
  const { t } = useTranslation('auth');
  usePageTitle(t('idpCallback.pageTitle'));
  const slug = useSlug();
  const onSignedIn = useSignedInNavigation(slug);
  const [params] = useState(() => callbackParamsOf(window.location.hash));
  const started = useRef(false);
  const complete = useMutation({
    mutationFn: () => trpc.browser.idpCallback.mutate({ tenantSlug: slug, ...params }),
    onSuccess: (session) => onSignedIn(session),
  });
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(window.history.state, '', window.location.pathname);
    if (started.current || (!params.state && !params.error)) return;
    started.current = true;
    complete.mutate();
  }, [complete, params]);

  const error = complete.error ? toFormError(complete.error) : null;
  return <ProviderReturn slug={slug} arrived={Boolean(params.state || params.error)} error={error} onSignedIn={onSignedIn} />;
}
