import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** What a confirmation asks (docs/web.md "Confirmations"). */
export interface ConfirmRequest {
  /** The question in words, naming what the action changes (the dialog's description). */
  message: string;
  /** The label of the button that goes ahead, naming the action: "Delete role", "Suspend". */
  confirmLabel: string;
  /** The dialog's heading; "Please confirm" when left out. */
  title?: string;
  /** Whether the action destroys or ends something (the button is styled as dangerous); true when left out. */
  destructive?: boolean;
}

/** Asks for a confirmation; @returns a promise of true when the person went ahead, false when they cancelled (button, Escape). */
export type Confirm = (request: ConfirmRequest) => Promise<boolean>;

const ConfirmContext = createContext<Confirm | null>(null);

interface Pending {
  request: ConfirmRequest;
  resolve: (ok: boolean) => void;
  /** The element that had focus when the question was asked (the trigger), focused again afterwards. */
  trigger: Element | null;
}

/**
 * Gives every page below it {@link useConfirm}: one modal confirmation dialog at a time (a native
 * `<dialog>` opened with `showModal()`, so the rest of the page is inert while it is open).
 */
export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [pending, setPending] = useState<Pending | null>(null);
  const pendingRef = useRef<Pending | null>(null);
  const confirm = useCallback<Confirm>((request) => new Promise<boolean>((resolve) => {
    // a second question while one is open: the first counts as cancelled
    pendingRef.current?.resolve(false);
    const next = { request, resolve, trigger: document.activeElement };
    pendingRef.current = next;
    setPending(next);
  }), []);
  const settle = useCallback((ok: boolean) => {
    const current = pendingRef.current;
    if (!current) return;
    pendingRef.current = null;
    setPending(null);
    // the trigger gets focus back (it may have gone meanwhile, e.g. a row that the action removed)
    if (current.trigger instanceof HTMLElement && current.trigger.isConnected) current.trigger.focus();
    current.resolve(ok);
  }, []);
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      {pending && <ConfirmDialog key={pending.request.message + pending.request.confirmLabel} request={pending.request} onDone={settle} />}
    </ConfirmContext.Provider>
  );
}

/**
 * The console's confirmation (instead of `window.confirm`): `await confirm({ message, confirmLabel })`
 * is true when the person pressed the button named after the action, false on "Cancel" or Escape.
 * Needs a {@link ConfirmProvider} above (the root layout has one).
 */
export function useConfirm(): Confirm {
  const confirm = useContext(ConfirmContext);
  if (!confirm) throw new Error('useConfirm needs a ConfirmProvider above it');
  return confirm;
}

/**
 * The dialog of one question: role `alertdialog`, named by its heading and described by the
 * question; focus starts on "Cancel" (the safe choice), Escape cancels, the action button says what
 * it does.
 */
function ConfirmDialog({ request, onDone }: { request: ConfirmRequest; onDone: (ok: boolean) => void }) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) {
      dialog.returnValue = '';
      dialog.showModal();
      cancelRef.current?.focus();
    }
  }, []);
  return (
    <dialog
      ref={ref} role="alertdialog" className="confirm-dialog" aria-labelledby={`${id}-title`} aria-describedby={`${id}-message`}
      onClose={() => onDone(ref.current?.returnValue === 'confirm')}
    >
      <h2 id={`${id}-title`}>{request.title ?? t('confirm.title')}</h2>
      <p id={`${id}-message`}>{request.message}</p>
      <form method="dialog" className="actions">
        <button ref={cancelRef} type="submit" value="cancel" className="secondary">{t('confirm.cancel')}</button>
        <button type="submit" value="confirm" className={request.destructive === false ? undefined : 'danger'}>{request.confirmLabel}</button>
      </form>
    </dialog>
  );
}
