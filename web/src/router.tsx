import { createRootRoute, createRoute, createRouter, lazyRouteComponent, Link, Navigate, Outlet, useRouterState } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCALE_NAMES, LOCALES, type Locale } from '../../src/lib/locales.js';
import { toFormError } from './api';
import { ConfirmProvider } from './confirm';
import { BrandMark, brandStyle, useWorkspaceFavicon } from './brand';
import { useSignInOptions, useSlug } from './hooks';
import { currentLocale } from './i18n';
import { applyWorkspaceLanguage, chooseLocale } from './language';
import { applyTheme, storedTheme, type Theme } from './theme';
import { AccountPage, SignedInLayout } from './pages/account';
import { AdminLayout, ApiKeysPage, AuditPage, InvitesPage, SettingsPage, UsersPage } from './pages/admin';
import { RolesPage } from './pages/admin-roles';
import { UserPage } from './pages/admin-user';
import { AcceptInvitePage } from './pages/auth-accept-invite';
import { ConfirmEmailChangePage } from './pages/auth-confirm-email';
import { ForgotPasswordPage } from './pages/auth-forgot-password';
import { IdpCallbackPage } from './pages/auth-idp-callback';
import { ResetPasswordPage } from './pages/auth-reset-password';
import { SignInPage } from './pages/auth-sign-in';
import { SignUpPage } from './pages/auth-sign-up';
import { SsoCallbackPage } from './pages/auth-sso-callback';
import { VerifyEmailPage } from './pages/auth-verify-email';
import { HomePage } from './pages/home';
import { SSO_SETUP_KINDS, type SsoSetupKind } from './sso-kinds';

/**
 * The foot of every page: the theme switcher (web/src/theme.ts) and the language switcher
 * (web/src/i18n.ts), each remembered in this browser.
 */
function SiteFooter() {
  const { t } = useTranslation();
  const [theme, setTheme] = useState<Theme>(storedTheme);
  return (
    <footer className="site-footer">
      <label htmlFor="theme-switcher">{t('footer.theme')}</label>
      <select
        id="theme-switcher"
        value={theme}
        onChange={(e) => {
          const next = e.target.value as Theme;
          applyTheme(next);
          setTheme(next);
        }}
      >
        <option value="system">{t('footer.themes.system')}</option>
        <option value="light">{t('footer.themes.light')}</option>
        <option value="dark">{t('footer.themes.dark')}</option>
      </select>
      <label htmlFor="language-switcher">{t('footer.language')}</label>
      <select id="language-switcher" value={currentLocale()} onChange={(e) => chooseLocale(e.target.value as Locale)}>
        {LOCALES.map((locale) => (
          <option key={locale} value={locale} lang={locale}>{LOCALE_NAMES[locale]}</option>
        ))}
      </select>
    </footer>
  );
}

function RootLayout() {
  const { t } = useTranslation();
  return (
    <ConfirmProvider>
      <a href="#main" className="skip">{t('skipToContent')}</a>
      <Outlet />
      <SiteFooter />
    </ConfirmProvider>
  );
}

function NotFoundPage() {
  const { t } = useTranslation();
  return (
    <main className="card" id="main">
      <h1>{t('notFound.title')}</h1>
      <Link to="/">{t('notFound.home')}</Link>
    </main>
  );
}

/**
 * The frame of every `/app/{slug}` page: speaks the workspace's default language when the person
 * chose none and the browser asks for none the pages offer (web/src/language.ts).
 */
function WorkspaceLayout() {
  const { t } = useTranslation();
  const slug = useSlug();
  const options = useSignInOptions(slug);
  const defaultLocale = options.data?.defaultLocale;
  useEffect(() => applyWorkspaceLanguage(defaultLocale), [defaultLocale]);
  const branding = options.data?.branding;
  // signed-in pages carry the logo and name in their top bar instead (SignedInLayout)
  const signedIn = useRouterState({ select: (state) => state.matches.some((match) => match.routeId.includes('/signed-in')) });
  // the API lets only colours with white text at 4.5:1 through; secondary buttons take it where it
  // keeps its contrast in the theme (web/src/brand-colours.ts); links and text keep the theme's
  const style = brandStyle(branding?.primaryColor);
  useWorkspaceFavicon(branding?.logoUrl);
  // no live workspace has this slug: say so instead of a sign-in form that could only fail
  if (options.error && toFormError(options.error).reason === 'tenant_not_found') return <WorkspaceNotFound slug={slug} />;
  return (
    <div className={style ? 'branded' : undefined} style={style}>
      {branding && !signedIn && (
        <header className="brand-header">
          <BrandMark name={branding.displayName} logoUrl={branding.logoUrl} darkLogoUrl={branding.darkLogoUrl} display={branding.brandDisplay} />
        </header>
      )}
      <Outlet />
      {branding?.supportUrl && (
        <p className="brand-support">
          <a href={branding.supportUrl} rel="noopener noreferrer">{t('footer.support')}</a>
        </p>
      )}
    </div>
  );
}

/** `/app/{slug}/…` of a slug no live workspace has: a not-found page with the way back to "Open a workspace". */
function WorkspaceNotFound({ slug }: { slug: string }) {
  const { t } = useTranslation();
  const title = t('notFound.workspaceTitle');
  // not usePageTitle: a new observer of the failed sign-in-options query would fetch it again (a
  // query without data shows no error while it refetches), bringing back the page it replaced
  useEffect(() => {
    document.title = `${title} · Tenant Identity`;
  }, [title]);
  return (
    <main className="card" id="main">
      <h1>{t('notFound.workspaceTitle')}</h1>
      <p>{t('notFound.workspace', { slug })}</p>
      <Link to="/" hash="open-heading">{t('notFound.openAnother')}</Link>
    </main>
  );
}

function WorkspaceIndex() {
  return <Navigate to="/app/$slug/account" params={{ slug: useSlug() }} />;
}

/** The `token` of a mailed link (`?token=…`); nothing else is read from the query string. */
const tokenSearch = (search: Record<string, unknown>): { token?: string } => (typeof search.token === 'string' ? { token: search.token } : {});

// Console pages in modules of their own load on first visit (their code, the activity charts among
// it, stays out of the sign-in pages' bundle); the pages every visitor sees, the console's layout and
// the pages it shares code with come with the first load.
const ActivityPage = lazyRouteComponent(() => import('./pages/admin-activity'), 'ActivityPage');
const ApiResourcesPage = lazyRouteComponent(() => import('./pages/admin-api-resources'), 'ApiResourcesPage');
const ApplicationsPage = lazyRouteComponent(() => import('./pages/admin-applications'), 'ApplicationsPage');
const OrganizationPickerPage = lazyRouteComponent(() => import('./pages/organization-picker'), 'OrganizationPickerPage');
const OrganizationsPage = lazyRouteComponent(() => import('./pages/admin-organizations'), 'OrganizationsPage');
const OrganizationPage = lazyRouteComponent(() => import('./pages/admin-organizations'), 'OrganizationPage');
const WebhooksPage = lazyRouteComponent(() => import('./pages/admin-webhooks'), 'WebhooksPage');
const SsoConnectionsPage = lazyRouteComponent(() => import('./pages/admin-sso'), 'SsoConnectionsPage');
const NewSsoConnectionPage = lazyRouteComponent(() => import('./pages/admin-sso'), 'NewSsoConnectionPage');
const SsoConnectionPage = lazyRouteComponent(() => import('./pages/admin-sso'), 'SsoConnectionPage');
const ImportUsersPage = lazyRouteComponent(() => import('./pages/admin-import'), 'ImportUsersPage');

const rootRoute = createRootRoute({ component: RootLayout, notFoundComponent: NotFoundPage });
const homeRoute = createRoute({ getParentRoute: () => rootRoute, path: '/', component: HomePage });
const workspaceRoute = createRoute({ getParentRoute: () => rootRoute, path: '/app/$slug', component: WorkspaceLayout });
const workspaceIndexRoute = createRoute({ getParentRoute: () => workspaceRoute, path: '/', component: WorkspaceIndex });
/** The `interaction` of an application's sign-in request (docs/oidc.md); nothing else is read. */
const interactionSearch = (search: Record<string, unknown>): { interaction?: string } =>
  typeof search.interaction === 'string' ? { interaction: search.interaction } : {};
const signInRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'sign-in', component: SignInPage, validateSearch: interactionSearch });
const signUpRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'sign-up', component: SignUpPage });
const forgotRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'forgot-password', component: ForgotPasswordPage });
const resetRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'reset-password', component: ResetPasswordPage, validateSearch: tokenSearch });
const verifyRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'verify-email', component: VerifyEmailPage, validateSearch: tokenSearch });
const confirmEmailRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'confirm-email', component: ConfirmEmailChangePage, validateSearch: tokenSearch });
const acceptRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'accept-invite', component: AcceptInvitePage, validateSearch: tokenSearch });
const idpCallbackRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'idp-callback', component: IdpCallbackPage });
const ssoCallbackRoute = createRoute({ getParentRoute: () => workspaceRoute, path: 'sso-callback', component: SsoCallbackPage });
const organizationPickerRoute = createRoute({
  getParentRoute: () => workspaceRoute, path: 'choose-organization', component: OrganizationPickerPage, validateSearch: interactionSearch,
});
const signedInRoute = createRoute({ getParentRoute: () => workspaceRoute, id: 'signed-in', component: SignedInLayout });
const accountRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'account', component: AccountPage });
const adminRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'admin', component: AdminLayout });
const activityRoute = createRoute({ getParentRoute: () => adminRoute, path: '/', component: ActivityPage });
const usersRoute = createRoute({ getParentRoute: () => adminRoute, path: 'users', component: UsersPage });
const userRoute = createRoute({ getParentRoute: () => adminRoute, path: 'users/$userId', component: UserPage });
/** The import job the import page follows (`?job=<id>`, set once the page started it, so a reload keeps following it). */
const importSearch = (search: Record<string, unknown>): { job?: string } =>
  typeof search.job === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(search.job) ? { job: search.job } : {};
const importUsersRoute = createRoute({ getParentRoute: () => adminRoute, path: 'users/import', component: ImportUsersPage, validateSearch: importSearch });
/** The audit page's user filter from a link (`?userId=…`, the user page's "All events"). */
const auditSearch = (search: Record<string, unknown>): { userId?: string } => (typeof search.userId === 'string' ? { userId: search.userId } : {});
const invitesRoute = createRoute({ getParentRoute: () => adminRoute, path: 'invites', component: InvitesPage });
const apiKeysRoute = createRoute({ getParentRoute: () => adminRoute, path: 'api-keys', component: ApiKeysPage });
const settingsRoute = createRoute({ getParentRoute: () => adminRoute, path: 'settings', component: SettingsPage });
const auditRoute = createRoute({ getParentRoute: () => adminRoute, path: 'audit', component: AuditPage, validateSearch: auditSearch });
const applicationsRoute = createRoute({ getParentRoute: () => adminRoute, path: 'applications', component: ApplicationsPage });
const webhooksRoute = createRoute({ getParentRoute: () => adminRoute, path: 'webhooks', component: WebhooksPage });
const apiResourcesRoute = createRoute({ getParentRoute: () => adminRoute, path: 'api-resources', component: ApiResourcesPage });
const rolesRoute = createRoute({ getParentRoute: () => adminRoute, path: 'roles', component: RolesPage });
const organizationsRoute = createRoute({ getParentRoute: () => adminRoute, path: 'organizations', component: OrganizationsPage });
const organizationRoute = createRoute({ getParentRoute: () => adminRoute, path: 'organizations/$organizationId', component: OrganizationPage });
const ssoConnectionsRoute = createRoute({ getParentRoute: () => adminRoute, path: 'sso', component: SsoConnectionsPage });
/** `?organizationId=` from an organization's page: the organization the new connection signs people into. */
const ssoNewSearch = (search: Record<string, unknown>): { organizationId?: string } =>
  typeof search.organizationId === 'string' && /^[0-9a-f-]{36}$/i.test(search.organizationId) ? { organizationId: search.organizationId } : {};
const newSsoConnectionRoute = createRoute({ getParentRoute: () => adminRoute, path: 'sso/new', component: NewSsoConnectionPage, validateSearch: ssoNewSearch });
/** `?setup=<kind>` after the guided setup created the connection: whose field names step 2 uses (web/src/pages/admin-sso.tsx). */
const ssoSetupSearch = (search: Record<string, unknown>): { setup?: SsoSetupKind } =>
  typeof search.setup === 'string' && (SSO_SETUP_KINDS as readonly string[]).includes(search.setup) ? { setup: search.setup as SsoSetupKind } : {};
const ssoConnectionRoute = createRoute({ getParentRoute: () => adminRoute, path: 'sso/$connectionId', component: SsoConnectionPage, validateSearch: ssoSetupSearch });

const routeTree = rootRoute.addChildren([
  homeRoute,
  workspaceRoute.addChildren([
    workspaceIndexRoute,
    signInRoute,
    signUpRoute,
    forgotRoute,
    resetRoute,
    verifyRoute,
    confirmEmailRoute,
    acceptRoute,
    idpCallbackRoute,
    ssoCallbackRoute,
    organizationPickerRoute,
    signedInRoute.addChildren([accountRoute, adminRoute.addChildren([activityRoute, usersRoute, importUsersRoute, userRoute, invitesRoute, apiKeysRoute, applicationsRoute, apiResourcesRoute, rolesRoute, organizationsRoute, organizationRoute, ssoConnectionsRoute, newSsoConnectionRoute, ssoConnectionRoute, webhooksRoute, settingsRoute, auditRoute])]),
  ]),
]);

/** Every page of the front end; URL shapes are documented in docs/web.md. */
export const router = createRouter({ routeTree, defaultPreload: false });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
