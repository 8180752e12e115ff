import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { Checkbox, ErrorAlert, Field, formValue, Notice } from '../ui';

type Tenant = RouterOutputs['tenant']['get'];

/** A whole number typed in a form field, or undefined when the field is empty. */
function numberValue(form: FormData, name: string): number | undefined {
  const value = formValue(form, name);
  return value === undefined ? undefined : Number(value);
}

/**
 * The console's Policies section (docs/api-rules.md "Workspace policies"): the password rules, the
 * lockout after failed sign-ins and the refresh-token lifetime (entered in hours and days), saved
 * together with PATCH tenant.
 */
export function PoliciesSection({ slug, tenant }: { slug: string; tenant: Tenant }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn: (form: FormData) => {
      const windowMinutes = numberValue(form, 'lockoutWindowMinutes');
      const lifetimeHours = numberValue(form, 'refreshTokenLifetimeHours');
      return trpc.tenant.update.mutate({
        tenantSlug: slug,
        passwordPolicy: { minLength: numberValue(form, 'minLength'), rejectCommon: form.get('rejectCommon') === 'on' },
        lockout: {
          maxFailedAttempts: numberValue(form, 'maxFailedAttempts'),
          windowSeconds: windowMinutes === undefined ? undefined : Math.round(windowMinutes * 60),
        },
        sessionPolicy: { refreshTokenLifetimeSeconds: lifetimeHours === undefined ? undefined : Math.round(lifetimeHours * 3600) },
      });
    },
    onSuccess: (data) => queryClient.setQueryData(['tenant', slug], data),
  });
  const error = save.error ? toFormError(save.error) : null;
  const { passwordPolicy, lockout, sessionPolicy } = tenant;
  return (
    <section aria-labelledby="policies" className="panel">
      <h2 id="policies">{t('policies.title')}</h2>
      <form
        key={JSON.stringify([passwordPolicy, lockout, sessionPolicy])}
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(new FormData(e.currentTarget));
        }}
      >
        <ErrorAlert error={error} />
        {save.isSuccess && <Notice>{t('policies.saved')}</Notice>}
        <fieldset>
          <legend>{t('policies.passwords')}</legend>
          <Field
            label={t('policies.minLength')} name="minLength" type="number" min={12} max={128} required
            defaultValue={String(passwordPolicy.minLength)} error={error} hint={t('policies.minLengthHint')}
          />
          <Checkbox label={t('policies.rejectCommon')} name="rejectCommon" defaultChecked={passwordPolicy.rejectCommon} />
        </fieldset>
        <fieldset>
          <legend>{t('policies.lockout')}</legend>
          <Field
            label={t('policies.maxFailedAttempts')} name="maxFailedAttempts" type="number" min={3} max={100} required
            defaultValue={String(lockout.maxFailedAttempts)} error={error}
          />
          <Field
            label={t('policies.windowMinutes')} name="lockoutWindowMinutes" type="number" min={1} max={1440} required
            defaultValue={String(Math.round(lockout.windowSeconds / 60))} error={error} hint={t('policies.lockoutHint')}
          />
        </fieldset>
        <fieldset>
          <legend>{t('policies.sessions')}</legend>
          <Field
            label={t('policies.refreshTokenLifetimeHours')} name="refreshTokenLifetimeHours" type="number" min={1} max={720} required
            defaultValue={String(Math.round(sessionPolicy.refreshTokenLifetimeSeconds / 3600))} error={error} hint={t('policies.sessionsHint')}
          />
        </fieldset>
        <button type="submit" disabled={save.isPending}>{t('policies.save')}</button>
      </form>
    </section>
  );
}
