import { useMutation, useQueryClient } from '@tanstack/react-query';
import { wcagContrast } from 'culori';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { BrandDisplay } from '../../../src/entities/tenant.js';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { BrandMark, brandStyle } from '../brand';
import { formatNumber } from '../i18n';
import { ErrorAlert, Notice } from '../ui';

type Tenant = RouterOutputs['tenant']['get'];

/** The contrast white button text needs on the colour (WCAG 2.1 AA), as the API checks it. */
const MIN_CONTRAST = 4.5;
const HEX = /^#[0-9a-fA-F]{6}$/;
/** The choices of `brandDisplay`, in the order the form offers them. */
const BRAND_DISPLAY_CHOICES: readonly BrandDisplay[] = ['LogoAndName', 'LogoOnly', 'NameOnly'];

/** What a logo may be, as the API checks it (src/services/branding/logo-service.ts): the page refuses other files before sending. */
const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];
const MAX_LOGO_BYTES = 262_144;

/** A file's bytes as base64 (without the `data:` prefix). */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const dataUrl = String(reader.result);
      resolve(dataUrl.slice(dataUrl.indexOf(',') + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error('unreadable file'));
    reader.readAsDataURL(file);
  });
}

type LogoVariant = 'light' | 'dark';

/**
 * One logo of the workspace (the logo, or the dark theme's): choosing a file uploads it at once
 * (after the page's own check of its type and size, so a wrong file is refused before anything is
 * sent), or an https address is fetched by the service; the current one can be removed.
 */
function LogoField({ slug, variant, current, onSaved }: { slug: string; variant: LogoVariant; current: string | null; onSaved: (data: Tenant) => void }) {
  const { t } = useTranslation('admin');
  const id = useId();
  const [fileError, setFileError] = useState<string | null>(null);
  const [address, setAddress] = useState('');
  const dark = variant === 'dark';
  const setLogo = useMutation({
    mutationFn: (input: { dataBase64: string } | { url: string }) =>
      dark ? trpc.tenant.setDarkLogo.mutate({ tenantSlug: slug, ...input }) : trpc.tenant.setLogo.mutate({ tenantSlug: slug, ...input }),
    onSuccess: (data) => {
      onSaved(data);
      setAddress('');
    },
  });
  const removeLogo = useMutation({
    mutationFn: () => (dark ? trpc.tenant.deleteDarkLogo.mutate({ tenantSlug: slug }) : trpc.tenant.deleteLogo.mutate({ tenantSlug: slug })),
    onSuccess: onSaved,
  });
  const error = setLogo.error ? toFormError(setLogo.error) : removeLogo.error ? toFormError(removeLogo.error) : null;

  const choose = (input: HTMLInputElement) => {
    const file = input.files?.[0];
    // the same file chosen again (after a fix elsewhere) must fire another change
    input.value = '';
    if (!file) return;
    setLogo.reset();
    removeLogo.reset();
    if (!LOGO_TYPES.includes(file.type)) {
      setFileError(t('branding.fileWrongType'));
      return;
    }
    if (file.size > MAX_LOGO_BYTES) {
      setFileError(t('branding.fileTooLarge', { size: formatNumber(Math.ceil(file.size / 1024)) }));
      return;
    }
    setFileError(null);
    void readBase64(file).then((dataBase64) => setLogo.mutate({ dataBase64 }), () => setFileError(t('branding.fileUnreadable')));
  };

  return (
    <div className="logo-field">
      <h3>{t(dark ? 'branding.darkLogo' : 'branding.logo')}</h3>
      <p className="hint">{t(dark ? 'branding.darkLogoHint' : 'branding.logoHint')}</p>
      <ErrorAlert error={error} />
      {setLogo.isSuccess && <Notice>{t(dark ? 'branding.darkLogoSaved' : 'branding.logoSaved')}</Notice>}
      {removeLogo.isSuccess && !current && <Notice>{t(dark ? 'branding.darkLogoRemoved' : 'branding.logoRemoved')}</Notice>}
      <div className="field">
        <label htmlFor={`${id}-file`}>{t(dark ? 'branding.darkLogoFile' : 'branding.logoFile')}</label>
        <input
          id={`${id}-file`}
          type="file"
          accept={LOGO_TYPES.join(',')}
          disabled={setLogo.isPending}
          aria-invalid={fileError ? true : undefined}
          aria-describedby={`${id}-file-hint${fileError ? ` ${id}-file-error` : ''}`}
          onChange={(e) => choose(e.currentTarget)}
        />
        <p id={`${id}-file-hint`} className="hint">{t('branding.fileHint')}</p>
        {fileError && <p id={`${id}-file-error`} className="field-error" role="alert">{fileError}</p>}
        {setLogo.isPending && <p role="status" className="hint">{t('branding.uploading')}</p>}
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setFileError(null);
          setLogo.mutate({ url: address.trim() });
        }}
      >
        <div className="field">
          <label htmlFor={`${id}-url`}>{t(dark ? 'branding.darkLogoUrl' : 'branding.logoUrl')}</label>
          <input id={`${id}-url`} type="url" value={address} placeholder="https://" onChange={(e) => setAddress(e.target.value)} />
        </div>
        <button type="submit" className="secondary" disabled={setLogo.isPending || !address.trim()}>{t(dark ? 'branding.fetchDarkLogo' : 'branding.fetchLogo')}</button>
      </form>
      {current ? (
        <button type="button" className="danger" disabled={removeLogo.isPending} onClick={() => removeLogo.mutate()}>
          {t(dark ? 'branding.removeDarkLogo' : 'branding.removeLogo')}
        </button>
      ) : (
        <p className="hint">{t(dark ? 'branding.noDarkLogo' : 'branding.noLogo')}</p>
      )}
    </div>
  );
}

/**
 * The console's Branding section (docs/web.md "Branding"): display name, how the header shows logo
 * and name, button colour (with its contrast against white text), support link, the logo and the
 * dark theme's logo (each uploaded as soon as it is chosen), and a live preview of the sign-in card
 * with the values as typed, before they are saved, in the current theme.
 */
export function BrandingSection({ slug, tenant }: { slug: string; tenant: Tenant }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const colourId = useId();
  const [displayName, setDisplayName] = useState(tenant.displayName ?? '');
  const [colour, setColour] = useState(tenant.primaryColor ?? '');
  const [supportUrl, setSupportUrl] = useState(tenant.supportUrl ?? '');
  const [brandDisplay, setBrandDisplay] = useState<BrandDisplay>(tenant.brandDisplay);
  const saved = (data: Tenant) => {
    queryClient.setQueryData(['tenant', slug], data);
    void queryClient.invalidateQueries({ queryKey: ['sign-in-options', slug] });
  };
  const save = useMutation({
    mutationFn: () =>
      trpc.tenant.update.mutate({
        tenantSlug: slug, displayName: displayName.trim() || null, primaryColor: colour || null, supportUrl: supportUrl.trim() || null, brandDisplay,
      }),
    onSuccess: saved,
  });

  const validColour = HEX.test(colour);
  const contrast = validColour ? wcagContrast('#ffffff', colour) : undefined;
  const saveError = save.error ? toFormError(save.error) : null;
  const previewStyle = brandStyle(validColour ? colour : null);

  return (
    <section aria-labelledby="branding" className="panel">
      <h2 id="branding">{t('branding.title')}</h2>
      <p className="hint">{t('branding.intro')}</p>
      <div className="branding-grid">
        <div>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate();
            }}
          >
            <ErrorAlert error={saveError} />
            {save.isSuccess && <Notice>{t('branding.saved')}</Notice>}
            <div className="field">
              <label htmlFor={`${colourId}-name`}>{t('branding.displayName')}</label>
              <input id={`${colourId}-name`} name="displayName" value={displayName} maxLength={120} onChange={(e) => setDisplayName(e.target.value)} aria-describedby={`${colourId}-name-hint`} />
              <p id={`${colourId}-name-hint`} className="hint">{t('branding.displayNameHint')}</p>
            </div>
            <fieldset aria-describedby={`${colourId}-display-hint`}>
              <legend>{t('branding.display')}</legend>
              {BRAND_DISPLAY_CHOICES.map((choice) => (
                <div className="choice" key={choice}>
                  <input
                    id={`${colourId}-display-${choice}`}
                    type="radio"
                    name="brandDisplay"
                    value={choice}
                    checked={brandDisplay === choice}
                    onChange={() => setBrandDisplay(choice)}
                  />
                  <label htmlFor={`${colourId}-display-${choice}`}>{t(`branding.displayChoices.${choice}`)}</label>
                </div>
              ))}
              <p id={`${colourId}-display-hint`} className="hint">{t('branding.displayHint')}</p>
            </fieldset>
            <div className="field">
              <label htmlFor={`${colourId}-hex`}>{t('branding.colourHex')}</label>
              <div className="colour-row">
                <input type="color" aria-label={t('branding.colour')} value={validColour ? colour : '#1d4ed8'} onChange={(e) => setColour(e.target.value)} />
                <input id={`${colourId}-hex`} name="primaryColor" value={colour} placeholder="#1d4ed8" pattern="#[0-9a-fA-F]{6}" onChange={(e) => setColour(e.target.value.trim())} aria-describedby={`${colourId}-contrast`} />
              </div>
              <p id={`${colourId}-contrast`} className={contrast !== undefined && contrast < MIN_CONTRAST ? 'field-error' : 'hint'} aria-live="polite">
                {contrast === undefined
                  ? t('branding.noColour')
                  : t(contrast >= MIN_CONTRAST ? 'branding.contrastOk' : 'branding.contrastLow', { ratio: formatNumber(Math.floor(contrast * 10) / 10) })}{' '}
                {t('branding.colourHint')}
              </p>
              {colour && <button type="button" className="link" onClick={() => setColour('')}>{t('branding.clearColour')}</button>}
            </div>
            <div className="field">
              <label htmlFor={`${colourId}-support`}>{t('branding.supportUrl')}</label>
              <input
                id={`${colourId}-support`}
                name="supportUrl"
                value={supportUrl}
                placeholder="https://"
                onChange={(e) => setSupportUrl(e.target.value)}
                aria-invalid={saveError?.fields.supportUrl ? true : undefined}
                aria-describedby={`${colourId}-support-hint${saveError?.fields.supportUrl ? ` ${colourId}-support-error` : ''}`}
              />
              <p id={`${colourId}-support-hint`} className="hint">{t('branding.supportUrlHint')}</p>
              {saveError?.fields.supportUrl && <p id={`${colourId}-support-error`} className="field-error">{saveError.fields.supportUrl}</p>}
            </div>
            <button type="submit" disabled={save.isPending}>{t('branding.save')}</button>
          </form>

          <LogoField slug={slug} variant="light" current={tenant.logoUrl} onSaved={saved} />
          <LogoField slug={slug} variant="dark" current={tenant.darkLogoUrl} onSaved={saved} />
        </div>

        <figure className="branding-preview" aria-labelledby={`${colourId}-preview`}>
          <figcaption id={`${colourId}-preview`}>
            <strong>{t('branding.preview')}</strong> <span className="hint">{t('branding.previewHint')}</span>
          </figcaption>
          <div className={previewStyle ? 'branded preview-frame' : 'preview-frame'} style={previewStyle} aria-hidden="true">
            <div className="brand-header">
              <BrandMark name={displayName.trim() || tenant.name} logoUrl={tenant.logoUrl} darkLogoUrl={tenant.darkLogoUrl} display={brandDisplay} />
            </div>
            <div className="card">
              <p className="preview-title">{t('branding.previewSignIn')}</p>
              <div className="field">
                <span className="preview-label">{t('branding.previewEmail')}</span>
                <span className="preview-input" />
              </div>
              <span className="preview-button">{t('branding.previewButton')}</span>{' '}
              <span className="preview-secondary">{t('branding.previewSecondary')}</span>
            </div>
            {supportUrl && <p className="brand-support"><span className="preview-link">{t('branding.previewSupport')}</span></p>}
          </div>
        </figure>
      </div>
    </section>
  );
}
