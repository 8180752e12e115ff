import { router } from '../trpc.js';
import { accountRouter } from './account.js';
import { authRouter } from './auth.js';
import { lifecycleRouter } from './lifecycle.js';
import { meRouter } from './me.js';
import { tenantsRouter } from './tenants.js';

/** Every procedure of the service; REST paths come from each procedure's `openapi` meta. */
export const appRouter = router({
  tenants: tenantsRouter,
  auth: authRouter,
  me: meRouter,
  account: accountRouter,
  lifecycle: lifecycleRouter,
});

/** The router type for end-to-end typed TypeScript clients of the `/trpc` endpoint. */
export type AppRouter = typeof appRouter;
