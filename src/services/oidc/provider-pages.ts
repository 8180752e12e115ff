import type { Tenant } from '../../entities/tenant.js';
import { escapeHtml } from '../../lib/html.js';
import { isLocale, negotiateLocale, type Locale, type Translation } from '../../lib/locales.js';

/**
 * The OpenID Provider's own pages (docs/oidc.md "The provider's pages"): the RP-initiated logout
 * confirmation, the page after a logout without a registered return address, and the error page of
 * a request that cannot go back to the application (unknown client, unregistered `redirect_uri` or
 * `post_logout_redirect_uri`). Each is in the workspace's name and colour, light or dark as the
 * browser prefers, and in its language: `ui_locales` first (OpenID Connect Core 3.1.2.1,
 * RP-Initiated Logout 1.0 §2), then the browser's `Accept-Language`, then the workspace's default.
 * No script: the provider's CSP allows none on these pages.
 */

const en = {
  logoutTitle: 'Sign out',
  logoutHeading: 'Sign out of {{workspace}}?',
  logoutText: 'You will be signed out of {{workspace}} in this browser.',
  logoutButton: 'Sign out',
  signedOutTitle: 'Signed out',
  signedOutHeading: 'You are signed out',
  signedOutText: 'You can close this window.',
  errorTitle: 'Something went wrong',
  errorHeading: 'This request cannot be completed',
  errorText: 'The application sent a request that {{workspace}} cannot accept. Go back to the application and try again; if it happens again, tell the application\'s team.',
  errorDetail: 'Details for the application\'s team',
};

const de: Translation<typeof en> = {
  logoutTitle: 'Abmelden',
  logoutHeading: 'Von {{workspace}} abmelden?',
  logoutText: 'Sie werden in diesem Browser von {{workspace}} abgemeldet.',
  logoutButton: 'Abmelden',
  signedOutTitle: 'Abgemeldet',
  signedOutHeading: 'Sie sind abgemeldet',
  signedOutText: 'Sie können dieses Fenster schließen.',
  errorTitle: 'Etwas ist schiefgelaufen',
  errorHeading: 'Diese Anfrage kann nicht abgeschlossen werden',
  errorText: 'Die Anwendung hat eine Anfrage gesendet, die {{workspace}} nicht annehmen kann. Kehren Sie zur Anwendung zurück und versuchen Sie es erneut; wenn es wieder passiert, informieren Sie das Team der Anwendung.',
  errorDetail: 'Details für das Team der Anwendung',
};

const fr: Translation<typeof en> = {
  logoutTitle: 'Se déconnecter',
  logoutHeading: 'Se déconnecter de {{workspace}} ?',
  logoutText: 'Vous serez déconnecté de {{workspace}} dans ce navigateur.',
  logoutButton: 'Se déconnecter',
  signedOutTitle: 'Déconnecté',
  signedOutHeading: 'Vous êtes déconnecté',
  signedOutText: 'Vous pouvez fermer cette fenêtre.',
  errorTitle: 'Une erreur est survenue',
  errorHeading: 'Cette demande ne peut pas aboutir',
  errorText: 'L\'application a envoyé une demande que {{workspace}} ne peut pas accepter. Revenez à l\'application et réessayez ; si cela se reproduit, prévenez l\'équipe de l\'application.',
  errorDetail: 'Détails pour l\'équipe de l\'application',
};

const es: Translation<typeof en> = {
  logoutTitle: 'Cerrar sesión',
  logoutHeading: '¿Cerrar sesión en {{workspace}}?',
  logoutText: 'Se cerrará tu sesión en {{workspace}} en este navegador.',
  logoutButton: 'Cerrar sesión',
  signedOutTitle: 'Sesión cerrada',
  signedOutHeading: 'Has cerrado sesión',
  signedOutText: 'Puedes cerrar esta ventana.',
  errorTitle: 'Algo salió mal',
  errorHeading: 'Esta solicitud no se puede completar',
  errorText: 'La aplicación envió una solicitud que {{workspace}} no puede aceptar. Vuelve a la aplicación e inténtalo de nuevo; si vuelve a pasar, avisa al equipo de la aplicación.',
  errorDetail: 'Detalles para el equipo de la aplicación',
};

/** The sentences of the provider's pages per language; English is the original. */
export const PROVIDER_PAGE_CATALOGS: Record<Locale, Translation<typeof en>> = { en, de, fr, es };

type PageKey = keyof typeof en;

/** The service's accent when the workspace chose none (the hosted pages' default). */
const DEFAULT_COLOR = '#2563eb';

/** What a page needs of the request: its `ui_locales` (when the provider parsed one) and `Accept-Language`. */
export interface PageRequest {
  uiLocales?: unknown;
  acceptLanguage?: string;
}

/**
 * The language of a provider page: the first of `ui_locales` (space-separated BCP 47 tags, `de-CH`
 * counting as `de`) that the pages speak, else the browser's, else the workspace's default.
 */
export function pageLocale(tenant: Pick<Tenant, 'defaultLocale'>, request: PageRequest): Locale {
  return uiLocaleOf(request.uiLocales) ?? negotiateLocale(request.acceptLanguage) ?? tenant.defaultLocale;
}

/**
 * The first language of a `ui_locales` value (space-separated BCP 47 tags, OpenID Connect Core
 * 3.1.2.1; `de-CH` counting as `de`) that the pages speak, or undefined.
 */
export function uiLocaleOf(uiLocales: unknown): Locale | undefined {
  if (typeof uiLocales !== 'string') return undefined;
  for (const tag of uiLocales.split(' ')) {
    const language = tag.split('-')[0]!.toLowerCase();
    if (isLocale(language)) return language;
  }
  return undefined;
}

/** The workspace's look of a provider page. */
export type PageTenant = Pick<Tenant, 'name' | 'displayName' | 'primaryColor' | 'defaultLocale'>;

function layout(tenant: PageTenant, locale: Locale, title: string, body: string): string {
  const color = tenant.primaryColor && /^#[0-9a-fA-F]{6}$/.test(tenant.primaryColor) ? tenant.primaryColor : DEFAULT_COLOR;
  const workspace = escapeHtml(tenant.displayName ?? tenant.name);
  return `<!DOCTYPE html><html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>${escapeHtml(title)} · ${workspace}</title>
<style>:root{color-scheme:light dark;--accent:${color}}body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;line-height:1.5}
.workspace{font-weight:600;color:var(--accent)}button{font:inherit;padding:.5rem 1rem;border:0;border-radius:.375rem;background:var(--accent);color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}details{margin-top:2rem;font-size:.875rem}code{word-break:break-word}</style></head>
<body><main><p class="workspace">${workspace}</p>${body}</main></body></html>`;
}

function translator(tenant: PageTenant, locale: Locale): (key: PageKey) => string {
  const workspace = escapeHtml(tenant.displayName ?? tenant.name);
  return (key) => escapeHtml(PROVIDER_PAGE_CATALOGS[locale][key]).replaceAll('{{workspace}}', workspace);
}

/**
 * The RP-initiated logout confirmation: `form` is oidc-provider's hidden form (`id="op.logoutForm"`,
 * its action and XSRF token), submitted by the one button.
 * @returns a complete HTML document.
 */
export function logoutPage(tenant: PageTenant, request: PageRequest, form: string): string {
  const locale = pageLocale(tenant, request);
  const t = translator(tenant, locale);
  return layout(tenant, locale, t('logoutTitle'), `<h1>${t('logoutHeading')}</h1><p>${t('logoutText')}</p>${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>${t('logoutButton')}</button>`);
}

/** The page after a logout that has no registered `post_logout_redirect_uri` to return to. @returns HTML. */
export function signedOutPage(tenant: PageTenant, request: PageRequest): string {
  const locale = pageLocale(tenant, request);
  const t = translator(tenant, locale);
  return layout(tenant, locale, t('signedOutTitle'), `<h1>${t('signedOutHeading')}</h1><p>${t('signedOutText')}</p>`);
}

/**
 * The error page of a request the provider cannot send back to the application (RFC 6749 §4.1.2.1:
 * no redirect to an unverified URI): a sentence for the person, and the OAuth `error` and
 * `error_description` (escaped) for the application's team. @returns HTML.
 */
export function errorPage(tenant: PageTenant, request: PageRequest, error: unknown, description: unknown): string {
  const locale = pageLocale(tenant, request);
  const t = translator(tenant, locale);
  const detail = [error, description].filter((part): part is string => typeof part === 'string' && part !== '').map(escapeHtml).join(': ');
  return layout(tenant, locale, t('errorTitle'), `<h1>${t('errorHeading')}</h1><p>${t('errorText')}</p>${detail ? `<details><summary>${t('errorDetail')}</summary><p><code>${detail}</code></p></details>` : ''}`);
}
