import { Link } from '@tanstack/react-router';
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { RouterOutputs } from '../api';
import { AUDIT_ACTIONS_BY_GROUP, detailEntries, emailInEvent, humanKey, isAuditAction, when, type AuditAction } from '../audit-format';

/** One item of GET audit. */
export type AuditItem = RouterOutputs['audit']['list']['items'][number];

/**
 * The words for an audit action or a webhook delivery's event type in the page language ("User
 * deleted" for `UserSoftDeleted`, "Test event" for `WebhookTest`); an unknown identifier as it is.
 */
export function useActionLabel(): (action: string) => string {
  const { t } = useTranslation('admin');
  return (action) => (isAuditAction(action) ? t(`auditActions.${action}`) : action === 'WebhookTest' ? t('eventView.webhookTest') : action);
}

/** An audit action in words, with its identifier as the tooltip (API users search by it). */
export function ActionLabel({ action }: { action: string }) {
  const label = useActionLabel();
  return <span title={action}>{label(action)}</span>;
}

/** The users the console knows by id, and whether that list is every user of the workspace (then a missing id is a deleted user). */
export interface KnownUsers {
  emailOf: ReadonlyMap<string, string>;
  complete: boolean;
  /** Emails the events on screen recorded for users, by user id (see {@link recordedEmails}). */
  recorded?: ReadonlyMap<string, string>;
}

/**
 * The emails a list of events recorded for the users they target (`details.email`, e.g. of
 * `UserSoftDeleted`), by user id: how the console names a deleted user in the other events about them.
 */
export function recordedEmails(events: readonly AuditItem[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const event of events) {
    const email = event.targetId ? emailInEvent(event, event.targetId) : undefined;
    if (email && !found.has(event.targetId!)) found.set(event.targetId!, email);
  }
  return found;
}

/** An event's actor or target as the console names it. */
export interface PartyName {
  /** What the page shows: an email, "Deleted user (a@b.c)", "API key 1a2b3c4d", "System". */
  text: string;
  /** The full id, for a tooltip and the detail view. */
  id: string | null;
  /** Set when the party is a live user of the workspace (their page can be linked). */
  userId?: string;
  deleted?: boolean;
}

/**
 * Names an event's actor or target: a live user by email; a user the console cannot find any more as
 * "Deleted user" with the email the event itself records (e.g. `UserSoftDeleted` details) or another
 * event on screen recorded for them (`known.recorded`), when the
 * known users are every user of the workspace; an API key or another kind with an 8-character id.
 */
export function useNameParty(known: KnownUsers): (event: AuditItem, side: 'actor' | 'target') => PartyName | null {
  const { t } = useTranslation('admin');
  return (event, side) => {
    const type = side === 'actor' ? event.actorType : event.targetType;
    const id = side === 'actor' ? event.actorId : event.targetId;
    if (!type) return null;
    const short = id ? ` ${id.slice(0, 8)}` : '';
    if (type === 'system') return { text: t('eventView.system'), id };
    if (type === 'api_key') return { text: `${t('eventView.apiKey')}${short}`, id };
    if (type !== 'user') return { text: `${humanKey(type)}${short}`, id };
    if (!id) return { text: t('eventView.user'), id };
    const email = known.emailOf.get(id);
    if (email) return { text: email, id, userId: id };
    const recorded = emailInEvent(event, id) ?? known.recorded?.get(id);
    if (!known.complete) return { text: recorded ?? `${t('eventView.user')}${short}`, id };
    return { text: recorded ? t('eventView.deletedUserEmail', { email: recorded }) : t('eventView.deletedUser'), id, deleted: true };
  };
}

/** A party's name on the page: a live user links to their page; a deleted one carries their id as a tooltip. */
export function PartyText({ party, slug }: { party: PartyName | null; slug: string }) {
  const { t } = useTranslation('admin');
  if (!party) return null;
  if (party.userId) return <Link to="/app/$slug/admin/users/$userId" params={{ slug, userId: party.userId }}>{party.text}</Link>;
  const title = party.deleted && party.id ? t('eventView.deletedUserId', { id: party.id }) : (party.id ?? undefined);
  return <span title={title}>{party.text}</span>;
}

/** The audit page's action filter: every action in words, grouped by area; the empty option is any action. */
export function ActionSelect({ label, name, emptyLabel, defaultValue }: { label: string; name: string; emptyLabel: string; defaultValue?: string }) {
  const { t } = useTranslation('admin');
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={defaultValue ?? ''}>
        <option value="">{emptyLabel}</option>
        {AUDIT_ACTIONS_BY_GROUP.map(({ group, actions }) => (
          <optgroup key={group} label={t(`eventGroups.${group}`)}>
            {actions.map((action) => <option key={action} value={action}>{t(`auditActions.${action}`)}</option>)}
          </optgroup>
        ))}
      </select>
    </div>
  );
}

/**
 * A "pick the events" checkbox group whose own checkbox checks or clears every box of the group,
 * and shows "mixed" when some are checked.
 */
function GroupBox({ label, checked, mixed, onChange }: { label: string; checked: boolean; mixed: boolean; onChange: (checked: boolean) => void }) {
  const id = useId();
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = mixed;
  }, [mixed]);
  return (
    <div className="field checkbox">
      <input ref={ref} id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** The form field names {@link EventTypePicker} writes; read them back with {@link pickedEventTypes}. */
const SCOPE_FIELD = 'eventScope';
const TYPES_FIELD = 'eventTypes';

/**
 * The event types a submitted {@link EventTypePicker} chose: `null` for every event (what the API
 * means by `eventTypes: null`, docs/events.md "Webhooks"), the picked actions, or `'none'` when
 * "only the picked events" was chosen with none picked (the API refuses an empty list).
 */
export function pickedEventTypes(form: FormData): AuditAction[] | null | 'none' {
  if (form.get(SCOPE_FIELD) !== 'some') return null;
  const picked = form.getAll(TYPES_FIELD).filter((value): value is AuditAction => typeof value === 'string' && isAuditAction(value));
  return picked.length > 0 ? picked : 'none';
}

/**
 * The events a webhook endpoint receives (docs/events.md "Webhooks"): "All events" (also those added
 * later), or only those picked below, as checkboxes grouped by area in fieldsets, each group with a
 * checkbox for all of it. Each action is shown in words with its identifier beneath. Read the choice
 * from the form with {@link pickedEventTypes}; `error` is shown when the choice could not be sent.
 */
export function EventTypePicker({ initial, error }: { initial: readonly AuditAction[] | null; error?: string | null }) {
  const { t } = useTranslation('admin');
  const id = useId();
  const [scope, setScope] = useState<'all' | 'some'>(initial ? 'some' : 'all');
  const [picked, setPicked] = useState<ReadonlySet<AuditAction>>(() => new Set(initial ?? []));
  const toggle = (actions: readonly AuditAction[], on: boolean) =>
    setPicked((current) => {
      const next = new Set(current);
      for (const action of actions) {
        if (on) next.add(action);
        else next.delete(action);
      }
      return next;
    });
  const errorId = `${id}-error`;
  // the refusal stands until the choice is one the API takes
  const shownError = error && scope === 'some' && picked.size === 0 ? error : null;
  return (
    <fieldset className="event-picker" aria-describedby={shownError ? errorId : undefined}>
      <legend>{t('eventPicker.legend')}</legend>
      <div className="choice">
        <input id={`${id}-all`} type="radio" name={SCOPE_FIELD} value="all" checked={scope === 'all'} onChange={() => setScope('all')} />
        <label htmlFor={`${id}-all`}>{t('eventPicker.all')}</label>
      </div>
      <div className="choice">
        <input id={`${id}-some`} type="radio" name={SCOPE_FIELD} value="some" checked={scope === 'some'} onChange={() => setScope('some')} />
        <label htmlFor={`${id}-some`}>{t('eventPicker.some')}</label>
      </div>
      {shownError && <p id={errorId} className="field-error" role="alert">{shownError}</p>}
      {scope === 'some' && (
        <>
          <p className="hint" role="status">{t('eventPicker.picked', { count: picked.size })}</p>
          {AUDIT_ACTIONS_BY_GROUP.map(({ group, actions }) => {
            const groupLabel = t(`eventGroups.${group}`);
            const count = actions.filter((action) => picked.has(action)).length;
            return (
              <fieldset key={group}>
                <legend>{groupLabel}</legend>
                <GroupBox label={t('eventPicker.groupAll', { group: groupLabel })} checked={count === actions.length} mixed={count > 0 && count < actions.length} onChange={(on) => toggle(actions, on)} />
                <div className="checks">
                  {actions.map((action) => {
                    const boxId = `${id}-${action}`;
                    return (
                      <div key={action} className="field checkbox">
                        <input
                          id={boxId} type="checkbox" name={TYPES_FIELD} value={action} checked={picked.has(action)}
                          onChange={(e) => toggle([action], e.target.checked)} aria-describedby={`${boxId}-id`}
                        />
                        <label htmlFor={boxId}>{t(`auditActions.${action}`)}</label>
                        <span id={`${boxId}-id`} className="hint mono">{action}</span>
                      </div>
                    );
                  })}
                </div>
              </fieldset>
            );
          })}
        </>
      )}
    </fieldset>
  );
}

/** A term and its value in the detail view; a missing value is a dash. */
function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children ?? '—'}</dd>
    </>
  );
}

/**
 * One audit event in a modal dialog (Escape or "Close" closes it, focus returns to the button that
 * opened it): time, the action in words and its identifier, actor and target (with their ids), IP
 * address, user agent, and the details as key/value pairs.
 */
export function EventDetail({ event, nameParty, slug, onClose }: { event: AuditItem; nameParty: ReturnType<typeof useNameParty>; slug: string; onClose: () => void }) {
  const { t } = useTranslation('admin');
  const label = useActionLabel();
  const ref = useRef<HTMLDialogElement>(null);
  const headingId = useId();
  useEffect(() => {
    const dialog = ref.current;
    // removing the element on close takes it out of the top layer, so no cleanup is needed
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  const party = (side: 'actor' | 'target') => {
    const named = nameParty(event, side);
    if (!named) return null;
    return (
      <>
        <PartyText party={named} slug={slug} />
        {named.id && <span className="hint mono legend-detail">{named.id}</span>}
      </>
    );
  };
  const entries = detailEntries(event.details);
  return (
    <dialog ref={ref} className="event-detail" aria-labelledby={headingId} onClose={onClose}>
      <h2 id={headingId}>{t('eventView.title')}</h2>
      <dl className="facts">
        <Fact term={t('eventView.time')}>{when(event.createdAt)}</Fact>
        <Fact term={t('eventView.action')}>{label(event.action)}</Fact>
        <Fact term={t('eventView.identifier')}><code>{event.action}</code></Fact>
        <Fact term={t('eventView.actor')}>{party('actor')}</Fact>
        <Fact term={t('eventView.target')}>{party('target')}</Fact>
        <Fact term={t('eventView.ip')}>{event.ip}</Fact>
        <Fact term={t('eventView.userAgent')}>{event.userAgent}</Fact>
      </dl>
      <h3>{t('eventView.data')}</h3>
      {entries.length === 0 ? <p className="muted">{t('eventView.noData')}</p> : (
        <dl className="facts">
          {entries.map(([key, value]) => <Fact key={key} term={key}>{value}</Fact>)}
        </dl>
      )}
      <form method="dialog">
        <button type="submit" className="secondary">{t('eventView.close')}</button>
      </form>
    </dialog>
  );
}

/** The "Details" button of an event row, named after the event for screen readers. */
export function EventDetailButton({ event, onOpen }: { event: AuditItem; onOpen: () => void }) {
  const { t } = useTranslation('admin');
  const label = useActionLabel();
  return (
    <button type="button" className="secondary" aria-haspopup="dialog" aria-label={t('eventView.showLabel', { action: label(event.action), time: when(event.createdAt) })} onClick={onOpen}>
      {t('eventView.show')}
    </button>
  );
}
