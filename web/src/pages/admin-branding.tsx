import { useMutation, useQueryClient } from '@tanstack/react-query';
import { wcagContrast } from 'culori';
import { type CSSProperties, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toFormError, trpc, type RouterOutputs } from '../api';
import { formatNumber } from '../i18n';
import { ErrorAlert, Notice } from '../ui';

type Tenant = RouterOutputs['tenant']['get'];

/** The contrast white button text needs on the colour (WCAG 2.1 AA), as the API checks it. */
const MIN_CONTRAST = 4.5;
const HEX = /^#[0-9a-fA-F]{6}$/;

/** A file as base64 (without the `data:` prefix) and as a data URL for the preview. */
function readImage(file: File): Promise<{ base64: string; dataUrl: string }> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const dataUrl = String(reader.result);
      resolve({ dataUrl, base64: dataUrl.slice(dataUrl.indexOf(',') + 1) });
    };
    reader.onerror = () => reject(reader.error ?? new Error('unreadable file'));
    reader.readAsDataURL(file);
  });
}

/**
 * The console's Branding section (docs/web.md "Branding"): display name, button colour (with its
 * contrast against white text), support link and logo, and a live preview of the sign-in card with
 * the values as typed, before they are saved.
 */
export function BrandingSection({ slug, tenant }: { slug: string; tenant: Tenant }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const colourId = useId();
  const [displayName, setDisplayName] = useState(tenant.displayName ?? '');
  const [colour, setColour] = useState(tenant.primaryColor ?? '');
  const [supportUrl, setSupportUrl] = useState(tenant.supportUrl ?? '');
  const [chosenLogo, setChosenLogo] = useState<{ base64: string; dataUrl: string } | null>(null);
  const [logoUrl, setLogoUrl] = useState('');
  const saved = (data: Tenant) => {
    queryClient.setQueryData(['tenant', slug], data);
    void queryClient.invalidateQueries({ queryKey: ['sign-in-options', slug] });
  };
  const save = useMutation({
    mutationFn: () =>
      trpc.tenant.update.mutate({ tenantSlug: slug, displayName: displayName.trim() || null, primaryColor: colour || null, supportUrl: supportUrl.trim() || null }),
    onSuccess: saved,
  });
  const setLogo = useMutation({
    mutationFn: (input: { dataBase64: string } | { url: string }) => trpc.tenant.setLogo.mutate({ tenantSlug: slug, ...input }),
    onSuccess: (data) => {
      saved(data);
      setChosenLogo(null);
      setLogoUrl('');
    },
  });
  const removeLogo = useMutation({ mutationFn: () => trpc.tenant.deleteLogo.mutate({ tenantSlug: slug }), onSuccess: saved });

  const validColour = HEX.test(colour);
  const contrast = validColour ? wcagContrast('#ffffff', colour) : undefined;
  const saveError = save.error ? toFormError(save.error) : null;
  const logoError = setLogo.error ? toFormError(setLogo.error) : removeLogo.error ? toFormError(removeLogo.error) : null;
  const previewLogo = chosenLogo?.dataUrl ?? tenant.logoUrl;
  const previewStyle = validColour ? ({ '--color-button': colour, '--color-button-text': '#ffffff' } as CSSProperties) : undefined;

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

          <h3>{t('branding.logo')}</h3>
          <p className="hint">{t('branding.logoHint')}</p>
          <ErrorAlert error={logoError} />
          {setLogo.isSuccess && <Notice>{t('branding.logoSaved')}</Notice>}
          {removeLogo.isSuccess && !tenant.logoUrl && <Notice>{t('branding.logoRemoved')}</Notice>}
          <div className="field">
            <label htmlFor={`${colourId}-file`}>{t('branding.logoFile')}</label>
            <input
              id={`${colourId}-file`}
              type="file"
              accept="image/png,image/jpeg,image/webp,image/gif"
              onChange={(e) => {
                const file = e.target.files?.[0];
                if (file) void readImage(file).then(setChosenLogo);
              }}
            />
          </div>
          {chosenLogo && (
            <button type="button" disabled={setLogo.isPending} onClick={() => setLogo.mutate({ dataBase64: chosenLogo.base64 })}>{t('branding.uploadLogo')}</button>
          )}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              setLogo.mutate({ url: logoUrl.trim() });
            }}
          >
            <div className="field">
              <label htmlFor={`${colourId}-url`}>{t('branding.logoUrl')}</label>
              <input id={`${colourId}-url`} type="url" value={logoUrl} placeholder="https://" onChange={(e) => setLogoUrl(e.target.value)} />
            </div>
            <button type="submit" className="secondary" disabled={setLogo.isPending || !logoUrl.trim()}>{t('branding.fetchLogo')}</button>
          </form>
          {tenant.logoUrl ? (
            <button type="button" className="danger" disabled={removeLogo.isPending} onClick={() => removeLogo.mutate()}>{t('branding.removeLogo')}</button>
          ) : (
            <p className="hint">{t('branding.noLogo')}</p>
          )}
        </div>

        <figure className="branding-preview" aria-labelledby={`${colourId}-preview`}>
          <figcaption id={`${colourId}-preview`}>
            <strong>{t('branding.preview')}</strong> <span className="hint">{t('branding.previewHint')}</span>
          </figcaption>
          <div className={validColour ? 'branded preview-frame' : 'preview-frame'} style={previewStyle} aria-hidden="true">
            <div className="brand-header">
              {previewLogo && <img src={previewLogo} alt="" />}
              <span className="brand-name">{displayName.trim() || tenant.name}</span>
            </div>
            <div className="card">
              <p className="preview-title">{t('branding.previewSignIn')}</p>
              <div className="field">
                <span className="preview-label">{t('branding.previewEmail')}</span>
                <span className="preview-input" />
              </div>
              <span className="preview-button">{t('branding.previewButton')}</span>
            </div>
            {supportUrl && <p className="brand-support"><span className="preview-link">{t('branding.previewSupport')}</span></p>}
          </div>
        </figure>
      </div>
    </section>
  );
}
