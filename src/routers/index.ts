import { router } from '../trpc.js';
import { apiKeysRouter } from './api-keys.js';
import { apiResourcesRouter } from './api-resources.js';
import { applicationsRouter } from './applications.js';
import { auditRouter } from './audit.js';
import { authRouter } from './auth.js';
import { browserRouter } from './browser.js';
import { idpRouter } from './idp.js';
import { ssoRouter } from './sso.js';
import { invitesRouter } from './invites.js';
import { meRouter } from './me.js';
import { oidcInteractionRouter } from './oidc-interaction.js';
import { mfaRouter } from './mfa.js';
import { rolesRouter } from './roles.js';
import { organizationRolesRouter } from './organization-roles.js';
import { organizationsRouter } from './organizations.js';
import { tenantRouter } from './tenant.js';
import { tenantsRouter } from './tenants.js';
import { usersRouter } from './users.js';
import { webhooksRouter } from './webhooks.js';

/**
 * Every procedure of the service, one router per URL prefix (`/v1/{tenantSlug}/auth/*` is `auth`,
 * `/oauth/idp/*` is `idp`, …); REST paths come from each procedure's `openapi` meta.
 */
export const appRouter = router({
  applications: applicationsRouter,
  tenants: tenantsRouter,
  auth: authRouter,
  me: meRouter,
  idp: idpRouter,
  sso: ssoRouter,
  mfa: mfaRouter,
  invites: invitesRouter,
  apiKeys: apiKeysRouter,
  users: usersRouter,
  tenant: tenantRouter,
  audit: auditRouter,
  browser: browserRouter,
  webhooks: webhooksRouter,
  apiResources: apiResourcesRouter,
  roles: rolesRouter,
  organizations: organizationsRouter,
  organizationRoles: organizationRolesRouter,
  oidcInteraction: oidcInteractionRouter,
});

/** The router type for end-to-end typed TypeScript clients of the `/trpc` endpoint. */
export type AppRouter = typeof appRouter;
