import { useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { currentAccessToken, rememberSession, restoreSession } from '../api';
import { forgetPersonData } from '../hooks';
import { applyApplicationLanguage } from '../language';
import { continueToApplication, interactionInfo, rememberInteraction, takeInteraction } from '../oidc-interaction';
import { hasPendingInvite } from '../pending-invite';

/**
 * After a session is issued: keep the access token, then go back to the application that asked for
 * the sign-in (OpenID Provider interaction; through the organization picker when the person has
 * several organizations to choose from), or else open the account page.
 */
export function useSignedInNavigation(slug: string) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  return async (session: { accessToken: string; accessTokenExpiresIn: number }, tenantSlug = slug) => {
    rememberSession(tenantSlug, session);
    forgetPersonData(queryClient, tenantSlug);
    queryClient.setQueryData(['session', tenantSlug], true);
    if (hasPendingInvite(tenantSlug)) {
      // an invite link waits: back to it, where the person accepts as themselves
      await navigate({ to: '/app/$slug/accept-invite', params: { slug: tenantSlug } });
      return;
    }
    const uid = takeInteraction(tenantSlug);
    if (uid) {
      const next = await continueToApplication(tenantSlug, uid, session.accessToken);
      if ('redirectTo' in next) {
        window.location.assign(next.redirectTo);
        return;
      }
      if ('pick' in next) {
        await navigate({ to: '/app/$slug/choose-organization', params: { slug: tenantSlug }, search: { interaction: uid } });
        return;
      }
    }
    await navigate({ to: '/app/$slug/account', params: { slug: tenantSlug } });
  };
}

/**
 * An application's sign-in request (`?interaction=`): remembered for after the sign-in, and finished
 * at once with the session the browser already holds unless the application asked for a new sign-in.
 * @returns the application's name to show, once known.
 */
export function useApplicationSignIn(slug: string): string | undefined {
  const { interaction } = useSearch({ strict: false }) as { interaction?: string };
  const navigate = useNavigate();
  const [clientName, setClientName] = useState<string>();
  useEffect(() => {
    if (!interaction) return;
    rememberInteraction(slug, interaction);
    let cancelled = false;
    void (async () => {
      const info = await interactionInfo(slug, interaction);
      if (cancelled || !info) return;
      setClientName(info.clientName);
      applyApplicationLanguage(info.uiLocale);
      if (info.freshSignInRequired || !(await restoreSession(slug))) return;
      const token = currentAccessToken(slug);
      if (!token || cancelled) return;
      const uid = takeInteraction(slug) ?? interaction;
      const next = await continueToApplication(slug, uid, token, info);
      if ('redirectTo' in next) window.location.assign(next.redirectTo);
      else if ('pick' in next) await navigate({ to: '/app/$slug/choose-organization', params: { slug }, search: { interaction: uid } });
      else rememberInteraction(slug, interaction);
    })();
    return () => {
      cancelled = true;
    };
  }, [slug, interaction, navigate]);
  return clientName;
}
