import { publicProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { router } from '../trpc.js';
import { documentOneOf, email, newPassword, tenantSessionOutput, toSession } from './schemas.js';
import { deliverSession } from './session-delivery.js';
import { TENANT_NAME_PATTERN } from '../services/tenants/tenant-service.js';
import { ACCOUNT_CREATION_PER_IP } from '../services/rate-limits/rate-limit-rules.js';

const tenantName = z
  .string()
  .max(120)
  .trim()
  .min(1)
  .regex(TENANT_NAME_PATTERN, 'must contain a letter a–z (accents are fine) or a digit 0–9: the workspace URL is made from them')
  .meta({ description: 'Shown on the pages; the workspace URL (slug) is made from its letters a–z (accents removed) and digits' });

/** The nested body: `{tenant:{name}, admin:{email,password}}`. */
const nestedForm = z.object({ tenant: z.object({ name: tenantName }), admin: z.object({ email, password: newPassword }) });
/** The flat body: `{name, email, password}`. */
const flatForm = z.object({ name: tenantName, email, password: newPassword });

/**
 * POST /v1/tenants accepts the nested form `{tenant:{name}, admin:{email,password}}` or the flat form
 * `{name, email, password}` (docs: the OpenAPI document's `oneOf`); exactly one must be complete.
 * Validated field by field so that `details.issues` names the fields of the form the caller used.
 */
const createTenantInput = z
  .object({
    tenant: nestedForm.shape.tenant.optional(),
    admin: nestedForm.shape.admin.optional(),
    name: tenantName.optional(),
    email: email.optional(),
    password: newPassword.optional(),
  })
  .superRefine((body, ctx) => {
    const nested = body.tenant !== undefined || body.admin !== undefined;
    const flat = body.name !== undefined || body.email !== undefined || body.password !== undefined;
    if (nested && flat) {
      ctx.addIssue({ code: 'custom', path: [], message: 'use either {tenant, admin} or {name, email, password}, not both' });
    } else if (nested) {
      if (!body.tenant) ctx.addIssue({ code: 'custom', path: ['tenant'], message: 'required' });
      if (!body.admin) ctx.addIssue({ code: 'custom', path: ['admin'], message: 'required' });
    } else {
      for (const key of ['name', 'email', 'password'] as const) {
        if (body[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'required' });
      }
    }
  })
  .meta({ override: documentOneOf({ 'Nested form': nestedForm, 'Flat form': flatForm }) });

const createTenantOutput = tenantSessionOutput.extend({
  tenant: z.object({ id: z.string(), slug: z.string(), name: z.string() }),
});

export const tenantsRouter = router({
  create: publicProcedure
    .meta({
      rateLimit: { ip: ACCOUNT_CREATION_PER_IP },
      openapi: {
        method: 'POST',
        path: '/v1/tenants',
        protect: false,
        tags: ['tenants'],
        summary: 'Create a tenant with its first admin and sign that admin in',
        description:
          'Open to anyone unless the deployment sets `TENANT_CREATION_TOKEN`: then the request needs ' +
          '`Authorization: Bearer <that token>` (401 `tenant_creation_token_required` otherwise).',
        errorResponses: {
          400: 'The body is neither complete form, or the name has no letter or digit (`invalid_name`)',
          401: 'TENANT_CREATION_TOKEN is set and was not presented (`tenant_creation_token_required`)',
          409: 'A tenant with the slug derived from this name exists (`slug_taken`)',
        },
      },
      errorReasons: { 400: ['invalid_name', 'password_too_short', 'password_too_common'], 401: ['tenant_creation_token_required'], 409: ['slug_taken'] },
    })
    .input(createTenantInput)
    .output(createTenantOutput)
    .mutation(async ({ ctx, input }) => {
      ctx.services.tenants.authorizeCreation(ctx.services.config.tenantCreationToken, ctx.req.headers.authorization);
      const form = input.tenant && input.admin
        ? { name: input.tenant.name, email: input.admin.email, password: input.admin.password }
        : { name: input.name!, email: input.email!, password: input.password! };
      const { tenant, user, tokens } = await ctx.services.tenants.create(ctx.em, form, ctx.meta);
      return deliverSession(ctx, tenant.slug, {
        ...toSession(user, tokens),
        tenantSlug: tenant.slug,
        tenant: { id: tenant.id, slug: tenant.slug, name: tenant.name },
      }, tokens.sessionId);
    }),
});
