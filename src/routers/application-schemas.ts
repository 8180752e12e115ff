import { z } from 'zod';
import { APPLICATION_TYPES, type Application } from '../services/oidc/application-service.js';
import { timestampOutput } from './schemas.js';

/** An application as the API shows it (docs/oidc.md "Applications"); never its client secret. */
export const applicationOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(APPLICATION_TYPES),
    clientId: z.string().meta({ description: 'The OAuth 2.0 `client_id`' }),
    redirectUris: z.array(z.string()),
    postLogoutRedirectUris: z.array(z.string()),
    createdAt: timestampOutput,
  })
  .meta({ id: 'Application' });

/** Shapes an application as the `Application` schema. */
export function toApplicationOutput(app: Application): z.infer<typeof applicationOutput> {
  return { ...app, createdAt: app.createdAt.toISOString() };
}
