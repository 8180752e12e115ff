import { useQuery } from '@tanstack/react-query';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc } from '../api';
import { currentLocale, formatDate, formatNumber } from '../i18n';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert } from '../ui';
import { GettingStarted } from './admin-checklist';

/** "2026-11-24" → "Nov 24" in the page language (the day is UTC, as the API counts it). */
function shortDay(date: string): string {
  return formatDate(`${date}T00:00:00Z`, { day: 'numeric', month: 'short', timeZone: 'UTC' });
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '—' : new Intl.NumberFormat(currentLocale(), { style: 'percent' }).format(part / whole);
}

/** One figure a person reads at a glance. */
function Figure({ label, value, note }: { label: string; value: string | number; note?: string }) {
  return (
    <div className="figure">
      <span className="figure-value">{value}</span>
      <span className="figure-label">{label}</span>
      {note && <span className="muted">{note}</span>}
    </div>
  );
}

/**
 * `/app/{slug}/admin`: the console's start page: sign-ins, failed sign-ins and sign-ups per day over
 * 30 days, active users and MFA adoption (GET audit/activity; charts by Recharts). Each chart has a
 * text summary beside it so the figures are readable without seeing the drawing (docs/web.md "Console").
 */
export function ActivityPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('activity.title'));
  const slug = useSlug();
  const activity = useQuery({ queryKey: ['activity', slug], queryFn: () => trpc.audit.activity.query({ tenantSlug: slug }) });
  const data = activity.data;
  const signInSeries = (data?.signIns ?? []).map((day, i) => ({
    day: shortDay(day.date), signIns: day.count, failed: data?.failedSignIns[i]?.count ?? 0,
  }));
  const signUpSeries = (data?.signUps ?? []).map((day) => ({ day: shortDay(day.date), signUps: day.count }));
  const total = (series: { count: number }[] | undefined) => (series ?? []).reduce((sum, d) => sum + d.count, 0);
  const mfa = data?.mfaAdoption;
  return (
    <main className="page" id="main">
      <h1>{t('activity.title')}</h1>
      <GettingStarted slug={slug} />
      <ErrorAlert error={activity.error ? toFormError(activity.error) : null} />
      {data && mfa && (
        <>
          <p className="muted">{t('activity.period', { from: shortDay(data.from), to: shortDay(data.to) })}</p>
          <div className="figures">
            <Figure label={t('activity.activeWeek')} value={formatNumber(data.activeUsers.last7Days)} />
            <Figure label={t('activity.activeMonth')} value={formatNumber(data.activeUsers.last30Days)} />
            <Figure label={t('activity.secondFactor')} value={percent(mfa.anyFactor, mfa.users)} note={t('activity.ofUsers', { count: mfa.anyFactor, total: mfa.users })} />
            <Figure label={t('activity.authenticator')} value={formatNumber(mfa.totp)} note={t('activity.withPasskey', { count: mfa.passkey })} />
          </div>
          <section aria-labelledby="sign-ins-heading" className="panel chart">
            <h2 id="sign-ins-heading">{t('activity.signIns')}</h2>
            <p className="muted" data-testid="sign-ins-summary">
              {t('activity.signInsSummary', {
                signIns: total(data.signIns), failed: total(data.failedSignIns),
                today: data.signIns.at(-1)?.count ?? 0, todayFailed: data.failedSignIns.at(-1)?.count ?? 0,
              })}
            </p>
            <ResponsiveContainer width="100%" height={240}>
              <LineChart data={signInSeries} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="day" minTickGap={16} />
                <YAxis allowDecimals={false} width={40} />
                <Tooltip />
                <Legend />
                <Line type="monotone" dataKey="signIns" name={t('activity.signInsSeries')} stroke="var(--color-primary)" strokeWidth={2} dot={false} isAnimationActive={false} />
                <Line type="monotone" dataKey="failed" name={t('activity.failedSeries')} stroke="var(--color-danger)" strokeWidth={2} dot={false} isAnimationActive={false} />
              </LineChart>
            </ResponsiveContainer>
          </section>
          <section aria-labelledby="sign-ups-heading" className="panel chart">
            <h2 id="sign-ups-heading">{t('activity.signUps')}</h2>
            <p className="muted">{t('activity.signUpsSummary', { count: total(data.signUps), today: data.signUps.at(-1)?.count ?? 0 })}</p>
            <ResponsiveContainer width="100%" height={200}>
              <BarChart data={signUpSeries} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="day" minTickGap={16} />
                <YAxis allowDecimals={false} width={40} />
                <Tooltip />
                <Bar dataKey="signUps" name={t('activity.signUpsSeries')} fill="var(--color-primary)" isAnimationActive={false} />
              </BarChart>
            </ResponsiveContainer>
          </section>
        </>
      )}
    </main>
  );
}
