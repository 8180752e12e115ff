import { useQuery, type QueryClient } from '@tanstack/react-query';
import { useParams, useSearch } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { restoreSession, trpc } from './api';

/** The `{tenantSlug}` of the current `/app/{tenantSlug}/...` page. */
export function useSlug(): string {
  return useParams({ strict: false }).slug ?? '';
}

/**
 * The `token` query parameter of a mailed link, read once and then removed from the address bar
 * (and so from the history and any later Referer), per docs/decisions.md "Web front end".
 */
export function useLinkToken(): string | undefined {
  const search = useSearch({ strict: false }) as { token?: unknown };
  const [token] = useState(() => (typeof search.token === 'string' ? search.token : undefined));
  useEffect(() => {
    if (token && window.location.search) window.history.replaceState(window.history.state, '', window.location.pathname);
  }, [token]);
  return token;
}

/** Whether the browser holds a session for the workspace (restored from the refresh cookie). */
export function useSignedIn(slug: string) {
  return useQuery({ queryKey: ['session', slug], queryFn: () => restoreSession(slug), staleTime: 60_000 });
}

/**
 * What a workspace's pages show before anyone signs in (public `idp.signInOptions`: provider
 * sign-in, the workspace's name and default language), fetched once per workspace and shared by
 * every page through the query cache.
 */
export function useSignInOptions(slug: string) {
  return useQuery({ queryKey: ['sign-in-options', slug], queryFn: () => trpc.idp.signInOptions.query({ tenantSlug: slug }), enabled: !!slug, staleTime: 60_000 });
}

/** The signed-in user (`me.get`), once a session is known. */
export function useMe(slug: string, enabled: boolean) {
  return useQuery({ queryKey: ['me', slug], queryFn: () => trpc.me.get.query({ tenantSlug: slug }), enabled });
}

/**
 * Sets the document title of a page: `<page> · <workspace display name>` under `/app/{slug}` (the slug
 * until sign-in-options answers), the page alone
 * elsewhere, so every tab and history entry says where it is.
 */
export function usePageTitle(page: string): void {
  const slug = useSlug();
  const workspace = useSignInOptions(slug).data?.branding.displayName ?? slug;
  useEffect(() => {
    document.title = workspace ? `${page} · ${workspace}` : `${page} · Tenant Identity`;
  }, [page, workspace]);
}

/**
 * Drops every cached answer about the person or the administration of workspace `slug` (their
 * sessions, users, audit, the TOTP QR code...), keeping only the public sign-in options. Called on
 * sign-out and sign-in, so that the next person at this browser never sees the last one's data, not
 * even for the moment a refetch takes.
 */
export function forgetPersonData(queryClient: QueryClient, slug: string): void {
  queryClient.removeQueries({
    predicate: (query) => query.queryKey[0] === 'totp-qr' || (query.queryKey[1] === slug && query.queryKey[0] !== 'sign-in-options'),
  });
}
