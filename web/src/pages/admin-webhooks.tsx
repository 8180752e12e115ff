import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { useConfirm, type ConfirmRequest } from '../confirm';
import type { AuditAction } from '../audit-format';
import { usePageTitle, useSlug } from '../hooks';
import { formatDateTime } from '../i18n';
import { CopyField, ErrorAlert, Field, formValue, Notice } from '../ui';
import { ActionLabel, EventTypePicker, pickedEventTypes } from './admin-events';

type Webhook = RouterOutputs['webhooks']['list']['items'][number];

const when = (iso: string | null) => (iso ? formatDateTime(iso) : '');

/**
 * Webhooks: endpoints with their signing secret shown once, event types, enable/disable, a test
 * event, secret rotation, deletion, and each endpoint's delivery log (docs/events.md "Webhooks").
 */
export function WebhooksPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('webhooks.title'));
  const slug = useSlug();
  const queryClient = useQueryClient();
  const [pickError, setPickError] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ url: string; value: string } | null>(null);
  const [result, setResult] = useState<string | null>(null);
  // a new key empties the form (the URL and the event picker's state) once an endpoint is added
  const [formKey, setFormKey] = useState(0);
  const webhooks = useQuery({ queryKey: ['webhooks', slug], queryFn: () => trpc.webhooks.list.query({ tenantSlug: slug }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['webhooks', slug] });
  const create = useMutation({
    mutationFn: ({ url, eventTypes }: { url: string; eventTypes: AuditAction[] | null }) => trpc.webhooks.create.mutate({ tenantSlug: slug, url, eventTypes }),
    onSuccess: (data) => {
      setSecret({ url: data.webhook.url, value: data.secret });
      setResult(null);
      setFormKey((key) => key + 1);
      return refresh();
    },
  });
  const action = useMutation({
    mutationFn: async ({ run }: { run: () => Promise<unknown>; done: string }) => run(),
    onSuccess: (_data, { done }) => {
      setResult(done);
      return refresh();
    },
  });
  const confirm = useConfirm();
  const act = async (run: () => Promise<unknown>, done: string, confirmation?: ConfirmRequest) => {
    if (confirmation && !(await confirm(confirmation))) return;
    action.mutate({ run, done });
  };
  const error = webhooks.error ?? create.error ?? action.error;
  const formError = create.error ? toFormError(create.error) : null;
  return (
    <main className="page" id="main">
      <h1>{t('webhooks.title')}</h1>
      <section aria-labelledby="new-webhook" className="panel">
        <h2 id="new-webhook">{t('webhooks.add')}</h2>
        <form
          key={formKey}
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            const eventTypes = pickedEventTypes(form);
            setPickError(eventTypes === 'none' ? t('eventPicker.pickOne') : null);
            if (eventTypes !== 'none') create.mutate({ url: formValue(form, 'url') ?? '', eventTypes });
          }}
        >
          <ErrorAlert error={formError} />
          <Field label={t('webhooks.url')} name="url" type="text" required error={formError} hint={t('webhooks.urlHint')} />
          <EventTypePicker initial={null} error={pickError} />
          <button type="submit" disabled={create.isPending}>{t('webhooks.addButton')}</button>
        </form>
        {secret && (
          <div className="created">
            <Notice>{t('webhooks.added', { url: secret.url })}</Notice>
            <CopyField id="webhook-secret" label={t('webhooks.secret')} value={secret.value} />
          </div>
        )}
      </section>
      <section aria-labelledby="webhook-list" className="panel">
        <h2 id="webhook-list">{t('webhooks.list')}</h2>
        <ErrorAlert error={error && error !== create.error ? toFormError(error) : null} />
        {result && <Notice>{result}</Notice>}
        {webhooks.data?.items.length === 0 && <p>{t('webhooks.none')}</p>}
        <ul className="endpoints">
          {webhooks.data?.items.map((w) => (
            <li key={w.id} className="endpoint">
              <p className="mono">{w.url}</p>
              <p>
                {w.enabled ? t('webhooks.enabled') : w.disabledReason === 'failing' ? t('webhooks.disabledFailing', { date: when(w.failingSince) }) : t('webhooks.disabled')}
                {' · '}
                {w.eventTypes ? t('webhooks.eventTypes', { count: w.eventTypes.length }) : t('webhooks.everyEvent')}
              </p>
              <div className="actions">
                <button type="button" className="secondary" aria-label={t('webhooks.testLabel', { url: w.url })} onClick={() => void act(() => trpc.webhooks.test.mutate({ tenantSlug: slug, id: w.id }), t('webhooks.testDone', { url: w.url }))}>
                  {t('webhooks.test')}
                </button>
                <button
                  type="button" className="secondary" aria-label={`${w.enabled ? t('webhooks.disable') : t('webhooks.enable')} ${w.url}`}
                  onClick={() => void act(() => trpc.webhooks.update.mutate({ tenantSlug: slug, id: w.id, enabled: !w.enabled }), t(w.enabled ? 'webhooks.disabledDone' : 'webhooks.enabledDone', { url: w.url }))}
                >
                  {w.enabled ? t('webhooks.disable') : t('webhooks.enable')}
                </button>
                <button
                  type="button" className="secondary" aria-label={t('webhooks.rotateLabel', { url: w.url })}
                  onClick={async () => {
                    if (!(await confirm({ message: t('webhooks.rotateConfirm', { url: w.url }), confirmLabel: t('confirmActions.rotateSecret') }))) return;
                    void trpc.webhooks.rotateSecret.mutate({ tenantSlug: slug, id: w.id }).then((r) => setSecret({ url: w.url, value: r.secret }), (e: unknown) => setResult(String(e)));
                  }}
                >
                  {t('webhooks.rotate')}
                </button>
                <button type="button" className="secondary" aria-expanded={open === w.id} aria-label={t('webhooks.deliveriesLabel', { url: w.url })} onClick={() => setOpen(open === w.id ? null : w.id)}>
                  {t('webhooks.deliveries')}
                </button>
                <button
                  type="button" className="danger" aria-label={`${t('webhooks.delete')} ${w.url}`}
                  onClick={() => void act(() => trpc.webhooks.delete.mutate({ tenantSlug: slug, id: w.id }), t('webhooks.deleteDone', { url: w.url }), { message: t('webhooks.deleteConfirm', { url: w.url }), confirmLabel: t('confirmActions.deleteEndpoint') })}
                >
                  {t('webhooks.delete')}
                </button>
              </div>
              {open === w.id && <WebhookDetail slug={slug} webhook={w} onSaved={(done) => { setResult(done); void refresh(); }} />}
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}

/** An endpoint's event types (editable) and its newest delivery attempts. */
function WebhookDetail({ slug, webhook, onSaved }: { slug: string; webhook: Webhook; onSaved: (done: string) => void }) {
  const { t } = useTranslation('admin');
  const [pickError, setPickError] = useState<string | null>(null);
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', slug, webhook.id],
    queryFn: () => trpc.webhooks.deliveries.query({ tenantSlug: slug, id: webhook.id }),
    refetchInterval: 2000,
  });
  const save = useMutation({
    mutationFn: (eventTypes: AuditAction[] | null) => trpc.webhooks.update.mutate({ tenantSlug: slug, id: webhook.id, eventTypes }),
    onSuccess: () => onSaved(t('webhooks.eventsSaved', { url: webhook.url })),
  });
  return (
    <div className="detail">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const eventTypes = pickedEventTypes(new FormData(e.currentTarget));
          setPickError(eventTypes === 'none' ? t('eventPicker.pickOne') : null);
          if (eventTypes !== 'none') save.mutate(eventTypes);
        }}
      >
        <ErrorAlert error={save.error ? toFormError(save.error) : null} />
        <EventTypePicker initial={webhook.eventTypes} error={pickError} />
        <button type="submit" className="secondary" disabled={save.isPending}>{t('webhooks.saveEvents')}</button>
      </form>
      <h3>{t('webhooks.log')}</h3>
      {deliveries.data?.items.length === 0 && <p>{t('webhooks.noDeliveries')}</p>}
      {(deliveries.data?.items.length ?? 0) > 0 && (
        <div className="table-wrap">
          <table className="cards">
            <caption className="visually-hidden">{t('webhooks.caption', { url: webhook.url })}</caption>
            <thead>
              <tr><th scope="col">{t('webhooks.time')}</th><th scope="col">{t('webhooks.event')}</th><th scope="col">{t('webhooks.attempt')}</th><th scope="col">{t('webhooks.outcome')}</th><th scope="col">{t('webhooks.status')}</th><th scope="col">{t('webhooks.nextRetry')}</th></tr>
            </thead>
            <tbody>
              {deliveries.data?.items.map((d) => (
                <tr key={d.id}>
                  <td role="cell">{when(d.createdAt)}</td>
                  <td role="cell" data-label={t('webhooks.event')}><ActionLabel action={d.eventType} /></td>
                  <td role="cell" data-label={t('webhooks.attempt')}>{d.attempt}</td>
                  <td role="cell" data-label={t('webhooks.outcome')}>{t(`values.deliveryOutcomes.${d.outcome}`)}{d.error ? ` (${d.error})` : ''}</td>
                  <td role="cell" data-label={t('webhooks.status')}>{d.responseStatus ?? ''}{d.latencyMs !== null ? t('webhooks.latency', { ms: d.latencyMs }) : ''}</td>
                  <td role="cell" data-label={t('webhooks.nextRetry')}>{when(d.nextRetryAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
