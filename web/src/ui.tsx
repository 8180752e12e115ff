import { useQuery } from '@tanstack/react-query';
import QRCode from 'qrcode';
import { useEffect, useId, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { FormError } from './api';

interface FieldProps {
  label: string;
  name: string;
  type?: 'text' | 'email' | 'password' | 'number' | 'datetime-local' | 'date' | 'url';
  error?: FormError | null;
  autoComplete?: string;
  required?: boolean;
  defaultValue?: string;
  placeholder?: string;
  inputMode?: 'numeric' | 'text' | 'email' | 'url';
  hint?: string;
  min?: number;
  max?: number;
  maxLength?: number;
}

/** A labelled input; the field's validation message sits under it and is linked by aria-describedby. */
export function Field({ label, name, type = 'text', error, hint, ...rest }: FieldProps) {
  const id = useId();
  const message = error?.fields[name];
  const describedBy = [hint ? `${id}-hint` : null, message ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} name={name} type={type} aria-invalid={message ? true : undefined} aria-describedby={describedBy} {...rest} />
      {hint && <p id={`${id}-hint`} className="hint">{hint}</p>}
      {message && <p id={`${id}-error`} className="field-error">{message}</p>}
    </div>
  );
}

interface SelectProps {
  label: string;
  name: string;
  options: readonly string[];
  defaultValue?: string;
  emptyLabel?: string;
  /** The text of an option (default: its value). */
  optionLabel?: (option: string) => string;
}

/** A labelled select; `emptyLabel` adds a first option with the empty value. */
export function Select({ label, name, options, defaultValue, emptyLabel, optionLabel }: SelectProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={defaultValue}>
        {emptyLabel !== undefined && <option value="">{emptyLabel}</option>}
        {options.map((o) => (
          <option key={o} value={o}>{optionLabel ? optionLabel(o) : o}</option>
        ))}
      </select>
    </div>
  );
}

/** A labelled checkbox. */
export function Checkbox({ label, name, defaultChecked, onChange }: { label: string; name: string; defaultChecked?: boolean; onChange?: (checked: boolean) => void }) {
  const id = useId();
  return (
    <div className="field checkbox">
      <input id={id} name={name} type="checkbox" defaultChecked={defaultChecked} onChange={(e) => onChange?.(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** The alert region of a form: announced by screen readers when an error appears. */
export function ErrorAlert({ error }: { error?: FormError | null }) {
  if (!error) return null;
  return (
    <div role="alert" className="alert">
      {error.message}
    </div>
  );
}

/** A polite status message (success notes). */
export function Notice({ children }: { children: ReactNode }) {
  return (
    <div role="status" className="notice">
      {children}
    </div>
  );
}

/** The string value of a form field, trimmed; undefined when empty. */
export function formValue(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  if (typeof value !== 'string') return undefined;
  const trimmed = name.toLowerCase().includes('password') ? value : value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** Layout of a centred card page (sign-in and friends). */
export function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="card" id="main">
      <h1>{title}</h1>
      {children}
    </main>
  );
}

/**
 * A new authenticator secret as the person adds it to an app: the otpauth URI as a QR code (a PNG data
 * URL, drawn in the browser) and the base32 secret to type (docs/mfa.md).
 */
export function TotpSecret({ secret, otpauthUri }: { secret: string; otpauthUri: string }) {
  const { t } = useTranslation();
  const id = useId();
  const qr = useQuery({
    queryKey: ['totp-qr', otpauthUri],
    queryFn: () => QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M', margin: 1, width: 220 }),
    gcTime: 0,
  });
  return (
    <>
      <p>{t('ui.scanQr')}</p>
      {qr.data && <img src={qr.data} alt={t('ui.qrAlt')} width={220} height={220} className="qr" />}
      <div className="field">
        <label htmlFor={id}>{t('ui.secret')}</label>
        <input id={id} readOnly value={secret} className="mono" />
      </div>
    </>
  );
}

/**
 * Recovery codes just issued (docs/mfa.md "Recovery codes"): the service shows them once, so the page
 * asks the person to keep them now, and offers to copy them or download them as a text file
 * (`recovery-codes-<workspace>.txt`, one code a line).
 */
export function RecoveryCodeList({ codes, workspace }: { codes: readonly string[]; workspace: string }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState<'copied' | 'failed' | null>(null);
  const text = `${t('ui.recoveryCodesFile', { workspace })}\n\n${codes.join('\n')}\n`;
  const copy = () => {
    navigator.clipboard.writeText(codes.join('\n')).then(
      () => setCopied('copied'),
      () => setCopied('failed'),
    );
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `recovery-codes-${workspace}.txt`;
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <div role="region" aria-label={t('ui.recoveryCodes')} className="recovery-codes">
      <p>{t('ui.saveCodes')}</p>
      <ul className="mono">
        {codes.map((code) => <li key={code}>{code}</li>)}
      </ul>
      <div className="actions">
        <button type="button" className="secondary" onClick={copy}>{t('ui.copyCodes')}</button>
        <button type="button" className="secondary" onClick={download}>{t('ui.downloadCodes')}</button>
      </div>
      {copied === 'copied' && <Notice>{t('ui.copied')}</Notice>}
      {copied === 'failed' && <div role="alert" className="alert">{t('ui.copyFailed')}</div>}
    </div>
  );
}

/** A read-only value with a Copy button (secrets shown once, client ids, URLs); its texts are in the `admin` catalog. */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const { t } = useTranslation('admin');
  const [copied, setCopied] = useState(false);
  useEffect(() => setCopied(false), [value]);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input id={id} readOnly value={value} className="mono" />
        <button
          type="button"
          className="secondary"
          aria-label={copied ? t('applications.copiedLabel', { label }) : t('applications.copyLabel', { label })}
          onClick={() => void navigator.clipboard.writeText(value).then(() => setCopied(true))}
        >
          {copied ? t('applications.copied') : t('applications.copy')}
        </button>
      </div>
    </div>
  );
}

/** The parts of a session's `method` the pages name in words (docs/api-rules.md "Sessions of a user"). */
const SESSION_METHOD_PARTS = ['password', 'totp', 'recovery_code', 'email_otp', 'idp', 'sso', 'passkey'] as const;

/**
 * How a session was authenticated in words: `password+totp` → "Password + authenticator app"; a part
 * the pages do not know is shown as it is; null → null.
 */
export function useSessionMethodLabel(): (method: string | null) => string | null {
  const { t } = useTranslation();
  return (method) => {
    if (method === null) return null;
    return method.split('+').map((part) => ((SESSION_METHOD_PARTS as readonly string[]).includes(part) ? t(`sessionMethods.${part as (typeof SESSION_METHOD_PARTS)[number]}`) : part)).join(' + ');
  };
}
