import type { Locale } from '../../src/lib/locales.js';
import { trpc } from './api';
/**
 * The hand-off between a workspace's OpenID Provider and its hosted sign-in page (docs/oidc.md
 * "Sign-in"): an application sends the person to `/app/{slug}/sign-in?interaction={uid}`; whichever
 * way they sign in (password, factor, passkey, provider), the page then finishes the interaction
 * with the session it holds and the browser goes back to the application.
 */

const storageKey = (slug: string) => `oidc-interaction:${slug}`;

/** Remembers the pending sign-in of an application across the page's own redirects (e.g. a provider sign-in). */
export function rememberInteraction(slug: string, uid: string): void {
  sessionStorage.setItem(storageKey(slug), uid);
}

/** Whether an application's sign-in is pending (without forgetting it). */
export function hasInteraction(slug: string): boolean {
  return sessionStorage.getItem(storageKey(slug)) !== null;
}

/** The pending sign-in of an application, if any, and forgets it. */
export function takeInteraction(slug: string): string | undefined {
  const uid = sessionStorage.getItem(storageKey(slug)) ?? undefined;
  sessionStorage.removeItem(storageKey(slug));
  return uid;
}

function interactionUrl(slug: string, uid: string): string {
  return `/v1/${encodeURIComponent(slug)}/oidc/interaction/${encodeURIComponent(uid)}`;
}

/**
 * The application asking, whether it wants a sign-in newer than any session held, the language it
 * asked for (`ui_locales`), whether it asked for scope `organizations` and the organization it named.
 */
export interface InteractionInfo {
  clientName: string;
  freshSignInRequired: boolean;
  uiLocale: Locale | null;
  organizationsRequested: boolean;
  organizationId: string | null;
}

/** Reads the pending sign-in (the provider's interaction cookie rides along); undefined when it is gone. */
export async function interactionInfo(slug: string, uid: string): Promise<InteractionInfo | undefined> {
  const res = await fetch(`${interactionUrl(slug, uid)}/details`);
  return res.ok ? ((await res.json()) as InteractionInfo) : undefined;
}

/**
 * Finishes the application's sign-in with the workspace session of `accessToken`.
 * @returns where the browser goes next, or the error's reason.
 */
export async function finishInteraction(
  slug: string, uid: string, accessToken: string, organizationId?: string,
): Promise<{ redirectTo: string } | { reason: string }> {
  const res = await fetch(`${interactionUrl(slug, uid)}/complete`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(organizationId ? { organizationId } : {}),
  });
  const body = (await res.json()) as { redirectTo?: string; details?: { reason?: string } };
  return res.ok && body.redirectTo ? { redirectTo: body.redirectTo } : { reason: body.details?.reason ?? 'interaction_not_found' };
}

/**
 * Where a signed-in person goes on with an application's sign-in (docs/oidc.md "Organization
 * picker"): straight back to the application, or, when it asked for scope `organizations` without
 * naming one and the person belongs to several, to the organization picker first.
 * @param known the interaction's details when the page has read them already.
 * @returns `{redirectTo}` (the application), `{pick: true}` (show the picker for `uid`), or the error's reason.
 */
export async function continueToApplication(
  slug: string, uid: string, accessToken: string, known?: InteractionInfo,
): Promise<{ redirectTo: string } | { pick: true } | { reason: string }> {
  const info = known ?? (await interactionInfo(slug, uid));
  if (info?.organizationsRequested && !info.organizationId) {
    const { items } = await trpc.me.organizations.query({ tenantSlug: slug });
    if (items.length > 1) return { pick: true };
  }
  return finishInteraction(slug, uid, accessToken);
}
