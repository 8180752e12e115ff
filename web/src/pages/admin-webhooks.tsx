import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert, Field, formValue, Notice } from '../ui';
import { AUDIT_ACTIONS } from './admin';
import { CopyField } from './admin-applications';

type Webhook = RouterOutputs['webhooks']['list']['items'][number];
type EventType = (typeof AUDIT_ACTIONS)[number];

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '');

/** The event types picked in a multiple select; none picked means every event. */
function pickedEvents(select: HTMLSelectElement | null): EventType[] | null {
  const picked = [...(select?.selectedOptions ?? [])].map((o) => o.value as EventType);
  return picked.length ? picked : null;
}

/** A multiple select of the audit actions an endpoint receives (docs/events.md "Webhooks"). */
function EventPicker({ id, defaultValue }: { id: string; defaultValue: EventType[] | null }) {
  return (
    <div className="field">
      <label htmlFor={id}>Events (pick none for every event)</label>
      <select id={id} multiple size={8} defaultValue={defaultValue ?? []}>
        {AUDIT_ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
      </select>
    </div>
  );
}

/**
 * Webhooks: endpoints with their signing secret shown once, event types, enable/disable, a test
 * event, secret rotation, deletion, and each endpoint's delivery log (docs/events.md "Webhooks").
 */
export function WebhooksPage() {
  usePageTitle('Webhooks');
  const slug = useSlug();
  const queryClient = useQueryClient();
  const createEventsId = useId();
  const [open, setOpen] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ url: string; value: string } | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const webhooks = useQuery({ queryKey: ['webhooks', slug], queryFn: () => trpc.webhooks.list.query({ tenantSlug: slug }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['webhooks', slug] });
  const create = useMutation({
    mutationFn: ({ url, eventTypes }: { url: string; eventTypes: EventType[] | null }) => trpc.webhooks.create.mutate({ tenantSlug: slug, url, eventTypes }),
    onSuccess: (data) => {
      setSecret({ url: data.webhook.url, value: data.secret });
      setResult(null);
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
  const act = (run: () => Promise<unknown>, done: string, confirmation?: string) => {
    if (confirmation && !window.confirm(confirmation)) return;
    action.mutate({ run, done });
  };
  const error = webhooks.error ?? create.error ?? action.error;
  const formError = create.error ? toFormError(create.error) : null;
  return (
    <main className="page" id="main">
      <h1>Webhooks</h1>
      <section aria-labelledby="new-webhook" className="panel">
        <h2 id="new-webhook">Add an endpoint</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            create.mutate({ url: formValue(form, 'url') ?? '', eventTypes: pickedEvents(document.getElementById(createEventsId) as HTMLSelectElement | null) });
          }}
        >
          <ErrorAlert error={formError} />
          <Field label="Endpoint URL" name="url" type="text" required error={formError} hint="A public https address; each body is signed (Standard Webhooks)." />
          <EventPicker id={createEventsId} defaultValue={null} />
          <button type="submit" disabled={create.isPending}>Add endpoint</button>
        </form>
        {secret && (
          <div className="created">
            <Notice>Endpoint added for {secret.url}. Copy its signing secret now: it is shown only once.</Notice>
            <CopyField id="webhook-secret" label="Signing secret" value={secret.value} />
          </div>
        )}
      </section>
      <section aria-labelledby="webhook-list" className="panel">
        <h2 id="webhook-list">Endpoints</h2>
        <ErrorAlert error={error && error !== create.error ? toFormError(error) : null} />
        {result && <Notice>{result}</Notice>}
        {webhooks.data?.items.length === 0 && <p>No endpoints yet.</p>}
        <ul className="endpoints">
          {webhooks.data?.items.map((w) => (
            <li key={w.id} className="endpoint">
              <p className="mono">{w.url}</p>
              <p>
                {w.enabled ? 'Enabled' : w.disabledReason === 'failing' ? `Disabled: failing since ${when(w.failingSince)}` : 'Disabled'}
                {' · '}
                {w.eventTypes ? `${w.eventTypes.length} event types` : 'Every event'}
              </p>
              <div className="actions">
                <button type="button" className="secondary" aria-label={`Send a test event to ${w.url}`} onClick={() => act(() => trpc.webhooks.test.mutate({ tenantSlug: slug, id: w.id }), `A test event is on its way to ${w.url}.`)}>
                  Send test event
                </button>
                <button
                  type="button" className="secondary" aria-label={`${w.enabled ? 'Disable' : 'Enable'} ${w.url}`}
                  onClick={() => act(() => trpc.webhooks.update.mutate({ tenantSlug: slug, id: w.id, enabled: !w.enabled }), `${w.url} is ${w.enabled ? 'disabled' : 'enabled'}.`)}
                >
                  {w.enabled ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button" className="secondary" aria-label={`Rotate the secret of ${w.url}`}
                  onClick={() => {
                    if (!window.confirm(`Rotate the signing secret of ${w.url}? Deliveries are signed with the new one at once.`)) return;
                    void trpc.webhooks.rotateSecret.mutate({ tenantSlug: slug, id: w.id }).then((r) => setSecret({ url: w.url, value: r.secret }), (e: unknown) => setResult(String(e)));
                  }}
                >
                  Rotate secret
                </button>
                <button type="button" className="secondary" aria-expanded={open === w.id} aria-label={`Deliveries and events of ${w.url}`} onClick={() => setOpen(open === w.id ? null : w.id)}>
                  Deliveries
                </button>
                <button
                  type="button" className="danger" aria-label={`Delete ${w.url}`}
                  onClick={() => act(() => trpc.webhooks.delete.mutate({ tenantSlug: slug, id: w.id }), `${w.url} was deleted.`, `Delete the endpoint ${w.url} and its delivery log?`)}
                >
                  Delete
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
  const eventsId = useId();
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', slug, webhook.id],
    queryFn: () => trpc.webhooks.deliveries.query({ tenantSlug: slug, id: webhook.id }),
    refetchInterval: 2000,
  });
  const save = useMutation({
    mutationFn: (eventTypes: EventType[] | null) => trpc.webhooks.update.mutate({ tenantSlug: slug, id: webhook.id, eventTypes }),
    onSuccess: () => onSaved(`The events of ${webhook.url} were saved.`),
  });
  return (
    <div className="detail">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(pickedEvents(document.getElementById(eventsId) as HTMLSelectElement | null));
        }}
      >
        <ErrorAlert error={save.error ? toFormError(save.error) : null} />
        <EventPicker id={eventsId} defaultValue={webhook.eventTypes} />
        <button type="submit" className="secondary" disabled={save.isPending}>Save events</button>
      </form>
      <h3>Delivery log</h3>
      {deliveries.data?.items.length === 0 && <p>No deliveries yet.</p>}
      {(deliveries.data?.items.length ?? 0) > 0 && (
        <div className="table-wrap">
          <table className="cards">
            <caption className="visually-hidden">Deliveries to {webhook.url}</caption>
            <thead>
              <tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Outcome</th><th scope="col">Status</th><th scope="col">Next retry</th></tr>
            </thead>
            <tbody>
              {deliveries.data?.items.map((d) => (
                <tr key={d.id}>
                  <td role="cell">{when(d.createdAt)}</td>
                  <td role="cell" data-label="Event">{d.eventType}</td>
                  <td role="cell" data-label="Attempt">{d.attempt}</td>
                  <td role="cell" data-label="Outcome">{d.outcome}{d.error ? ` (${d.error})` : ''}</td>
                  <td role="cell" data-label="Status">{d.responseStatus ?? ''}{d.latencyMs !== null ? ` in ${d.latencyMs} ms` : ''}</td>
                  <td role="cell" data-label="Next retry">{when(d.nextRetryAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
