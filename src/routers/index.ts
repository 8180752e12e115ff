import { mergeRouters, router } from '../trpc.js';
import { authRouter } from './auth.js';
import { idpRouter } from './idp.js';
import { authMfaRouter } from './auth-mfa.js';
import { accountRouter } from './account.js';
import { lifecycleRouter } from './lifecycle.js';
import { meRouter } from './me.js';
import { mfaRouter } from './mfa.js';
import { tenantsRouter } from './tenants.js';
import { userMfaRouter } from './user-mfa.js';
import { apiKeysRouter } from './api-keys.js';
import { auditRouter } from './audit.js';
import { invitesRouter } from './invites.js';
import { tenantRouter } from './tenant.js';
import { usersRouter } from './users.js';

/** Every procedure of the service; REST paths come from each procedure's `openapi` meta. */
export const appRouter = router({
  tenants: tenantsRouter,
  auth: mergeRouters(authRouter, authMfaRouter),
  me: meRouter,
  idp: idpRouter,
  mfa: mfaRouter,
  userMfa: userMfaRouter,
  invites: invitesRouter,
  apiKeys: apiKeysRouter,
  users: usersRouter,
  tenant: tenantRouter,
  audit: auditRouter,
  account: accountRouter,
  lifecycle: lifecycleRouter,
});

/** The router type for end-to-end typed TypeScript clients of the `/trpc` endpoint. */
export type AppRouter = typeof appRouter;
