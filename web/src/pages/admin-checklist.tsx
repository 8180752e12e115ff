import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { trpc } from '../api';

/** The steps of the checklist, in the order shown; each names its page and its text in the `admin` catalog (`gettingStarted.items`). */
export const GETTING_STARTED_STEPS = ['branding', 'application', 'colleague', 'mfa', 'webhook'] as const;
type Step = (typeof GETTING_STARTED_STEPS)[number];

const STEP_PAGES = {
  branding: '/app/$slug/admin/settings',
  application: '/app/$slug/admin/applications',
  colleague: '/app/$slug/admin/invites',
  mfa: '/app/$slug/admin/settings',
  webhook: '/app/$slug/admin/webhooks',
} as const satisfies Record<Step, string>;

/** Where this browser remembers that the checklist of workspace `slug` was dismissed. */
export const gettingStartedDismissedKey = (slug: string) => `getting-started-dismissed:${slug}`;

function readDismissed(slug: string): boolean {
  try {
    return window.localStorage.getItem(gettingStartedDismissedKey(slug)) === '1';
  } catch {
    return false; // storage refused (a private window's policy): the checklist simply shows
  }
}

/**
 * Which steps of a new workspace's setup are done, from the workspace's state as the API reads it
 * (GET tenant, applications, invites, users, webhooks, audit): branding set (a display name, button
 * colour or logo); an application; a colleague (an invite sent, or a second user); the MFA policy
 * chosen (no longer the default `Optional`, or changed once: a `TenantUpdated` event with
 * `changes.mfaPolicy`); a webhook endpoint. @returns null until every read answered.
 */
function useGettingStartedState(slug: string, enabled: boolean): Record<Step, boolean> | null {
  const tenant = useQuery({ queryKey: ['tenant', slug], queryFn: () => trpc.tenant.get.query({ tenantSlug: slug }), enabled });
  const applications = useQuery({ queryKey: ['applications', slug], queryFn: () => trpc.applications.list.query({ tenantSlug: slug }), enabled });
  const invites = useQuery({ queryKey: ['invites', slug, true, true], queryFn: () => trpc.invites.list.query({ tenantSlug: slug, includeAccepted: true, includeRevoked: true }), enabled });
  const users = useQuery({ queryKey: ['users', slug, 'getting-started'], queryFn: () => trpc.users.list.query({ tenantSlug: slug, limit: 2 }), enabled });
  const webhooks = useQuery({ queryKey: ['webhooks', slug], queryFn: () => trpc.webhooks.list.query({ tenantSlug: slug }), enabled });
  const mfaChanges = useQuery({
    queryKey: ['audit', slug, 'getting-started'],
    queryFn: () => trpc.audit.list.query({ tenantSlug: slug, action: 'TenantUpdated', limit: 200 }),
    enabled,
  });
  if (!tenant.data || !applications.data || !invites.data || !users.data || !webhooks.data || !mfaChanges.data) return null;
  const t = tenant.data;
  const mfaChanged = mfaChanges.data.items.some((event) => {
    const changes = (event.details as { changes?: Record<string, unknown> } | null)?.changes;
    return !!changes && 'mfaPolicy' in changes;
  });
  return {
    branding: !!(t.displayName || t.primaryColor || t.logoUrl),
    application: applications.data.items.length > 0,
    colleague: invites.data.items.length > 0 || users.data.items.length > 1,
    mfa: t.mfaPolicy !== 'Optional' || mfaChanged,
    webhook: webhooks.data.items.length > 0,
  };
}

/**
 * "Getting started" on the console's first page: the steps of setting up a new workspace, each
 * marked done or to do from the workspace's real state and linking to its page. "Dismiss" hides it
 * in this browser (localStorage); it is gone by itself once every step is done (docs/web.md "Console").
 */
export function GettingStarted({ slug }: { slug: string }) {
  const { t } = useTranslation('admin');
  const [dismissed, setDismissed] = useState(() => readDismissed(slug));
  const state = useGettingStartedState(slug, !dismissed);
  if (dismissed || !state) return null;
  const done = GETTING_STARTED_STEPS.filter((step) => state[step]).length;
  if (done === GETTING_STARTED_STEPS.length) return null;
  const dismiss = () => {
    try {
      window.localStorage.setItem(gettingStartedDismissedKey(slug), '1');
    } catch {
      // not remembered: hidden for this visit only
    }
    setDismissed(true);
  };
  return (
    <section aria-labelledby="getting-started" className="panel getting-started">
      <h2 id="getting-started">{t('gettingStarted.title')}</h2>
      <p>{t('gettingStarted.progress', { done, total: GETTING_STARTED_STEPS.length })}</p>
      <ul className="checklist">
        {GETTING_STARTED_STEPS.map((step) => (
          <li key={step} className={state[step] ? 'done' : 'todo'}>
            <span aria-hidden="true" className="check-mark">{state[step] ? '✓' : '○'}</span>
            <span className="visually-hidden">{state[step] ? t('gettingStarted.done') : t('gettingStarted.todo')}</span>
            <Link to={STEP_PAGES[step]} params={{ slug }}>{t(`gettingStarted.items.${step}`)}</Link>
          </li>
        ))}
      </ul>
      <button type="button" className="secondary" onClick={dismiss}>{t('gettingStarted.dismiss')}</button>
    </section>
  );
}
