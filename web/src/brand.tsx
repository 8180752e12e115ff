import { useEffect } from 'react';
import type { BrandDisplay } from '../../src/entities/tenant.js';

/**
 * A workspace's look on its pages (docs/web.md "Branding"): its logo and name as the header shows
 * them and its logo as the tab's icon (its colours: web/src/brand-colours.ts).
 */
export { brandStyle } from './brand-colours';

/**
 * The workspace's logo and name as its header shows them (`brandDisplay`): both, the logo alone (the
 * name its alt text) or the name alone; without a logo, the name. With a dark-theme logo both images
 * are rendered and the stylesheet shows the one of the current theme (`.logo-light`, `.logo-dark`:
 * system setting or the theme switcher's `data-theme`).
 */
export function BrandMark({ name, logoUrl, darkLogoUrl, display }: { name: string; logoUrl: string | null; darkLogoUrl: string | null; display: BrandDisplay }) {
  const showLogo = logoUrl !== null && display !== 'NameOnly';
  const showName = !showLogo || display !== 'LogoOnly';
  const alt = showName ? '' : name;
  return (
    <>
      {showLogo && <img className={darkLogoUrl ? 'logo-light' : undefined} src={logoUrl} alt={alt} />}
      {showLogo && darkLogoUrl && <img className="logo-dark" src={darkLogoUrl} alt={alt} />}
      {showName && <span className="brand-name">{name}</span>}
    </>
  );
}

/**
 * Makes the workspace's logo the page's icon (`<link rel="icon">`) while its pages are open; the
 * service's own icon comes back when they are left or the workspace has no logo.
 */
export function useWorkspaceFavicon(logoUrl: string | null | undefined): void {
  useEffect(() => {
    if (!logoUrl) return undefined;
    const link = document.querySelector<HTMLLinkElement>('link[rel~="icon"]');
    if (!link) return undefined;
    const before = { href: link.getAttribute('href'), type: link.getAttribute('type') };
    link.setAttribute('href', logoUrl);
    // the logo's type is whatever was uploaded (PNG, JPEG, WebP, GIF): let the browser judge it
    link.removeAttribute('type');
    return () => {
      if (before.href !== null) link.setAttribute('href', before.href);
      if (before.type !== null) link.setAttribute('type', before.type);
    };
  }, [logoUrl]);
}
