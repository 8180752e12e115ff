import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, useSearch } from '@tanstack/react-router';
import { Trans, useTranslation } from 'react-i18next';
import { currentAccessToken, reasonAsFormError, restoreSession, toFormError, trpc } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { finishInteraction, interactionInfo } from '../oidc-interaction';
import { Card, ErrorAlert } from '../ui';

/**
 * `/app/{slug}/choose-organization?interaction={uid}`: the organization picker (docs/oidc.md
 * "Organization picker"). An application asked for scope `organizations` and the signed-in person
 * belongs to several: they pick the one to continue with, and the sign-in finishes with it (the ID
 * token's `organization_id`). The sign-in pages send a person here only when there is a choice.
 */
export function OrganizationPickerPage() {
  const { t, i18n } = useTranslation('auth');
  usePageTitle(t('organizationPicker.title'));
  const slug = useSlug();
  const { interaction } = useSearch({ strict: false }) as { interaction?: string };
  const state = useQuery({
    queryKey: ['organization-picker', slug, interaction],
    queryFn: async () => {
      const info = interaction ? await interactionInfo(slug, interaction) : undefined;
      if (!info || !(await restoreSession(slug))) return { info, organizations: undefined };
      const { items } = await trpc.me.organizations.query({ tenantSlug: slug });
      return { info, organizations: items };
    },
    retry: false,
  });
  const pick = useMutation({
    mutationFn: async (organizationId: string) => {
      const token = currentAccessToken(slug);
      if (!token || !interaction) return { reason: 'interaction_not_found' };
      return finishInteraction(slug, interaction, token, organizationId);
    },
    onSuccess: (finished) => {
      if ('redirectTo' in finished) window.location.assign(finished.redirectTo);
    },
  });
  const names = new Intl.ListFormat(i18n.language, { type: 'conjunction' });
  const loadError = state.error ? toFormError(state.error) : null;
  const pickError = pick.data && 'reason' in pick.data ? reasonAsFormError(pick.data.reason) : pick.error ? toFormError(pick.error) : null;

  if (state.isPending) return <Card title={t('organizationPicker.title')}><p role="status">{t('organizationPicker.loading')}</p></Card>;
  if (loadError || !state.data?.info) {
    return (
      <Card title={t('organizationPicker.title')}>
        <ErrorAlert error={loadError ?? reasonAsFormError('interaction_not_found')} />
      </Card>
    );
  }
  const { info, organizations } = state.data;
  if (!organizations) {
    return (
      <Card title={t('organizationPicker.title')}>
        <p>{t('organizationPicker.signInFirst')}</p>
        <Link to="/app/$slug/sign-in" params={{ slug }} search={{ interaction }}>{t('nav.signIn')}</Link>
      </Card>
    );
  }
  return (
    <Card title={t('organizationPicker.title')}>
      <p>
        <Trans t={t} i18nKey="organizationPicker.intro" values={{ app: info.clientName }} components={{ strong: <strong /> }} />
      </p>
      <ErrorAlert error={pickError} />
      <ul className="organization-choices" aria-label={t('organizationPicker.list')}>
        {organizations.map((organization) => (
          <li key={organization.id}>
            <button
              type="button"
              disabled={pick.isPending}
              aria-describedby={`organization-roles-${organization.id}`}
              onClick={() => pick.mutate(organization.id)}
            >
              {organization.name}
            </button>
            <span id={`organization-roles-${organization.id}`} className="muted">
              {organization.roles.length > 0 ? t('organizationPicker.roles', { roles: names.format(organization.roles) }) : t('organizationPicker.noRoles')}
            </span>
          </li>
        ))}
      </ul>
    </Card>
  );
}
