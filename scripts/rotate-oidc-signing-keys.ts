import '../src/node-version.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Keyring } from '../src/security/keyring.js';
import { RETIRED_KEY_PUBLISH_SECONDS, SigningKeyService } from '../src/services/oidc/signing-keys.js';
import { runDatabaseScript } from './database-script.js';

/**
 * `npm run oidc:rotate-signing-keys [-- <workspace slug>…]`: gives every workspace's OpenID Provider
 * (or the named ones) a new RS256 and a new ES256 signing key (docs/oidc.md "Key rotation"). The previous keys stay
 * in the JWKS for RETIRED_KEY_PUBLISH_SECONDS, so tokens it signed still verify; running instances
 * sign with the new key within 10 minutes (they rebuild their providers). Exits 0 when done, 2 on a
 * configuration or database error. On the embedded database stop the service first.
 */
runDatabaseScript('signing-key rotation', async (orm, config, logger) => {
  const slugs = process.argv.slice(2);
  const em = orm.em.fork() as EntityManager;
  const tenants = (await em.execute(
    `select id, slug from tenant where deleted_at is null${slugs.length ? ` and slug in (${slugs.map(() => '?').join(', ')})` : ''} order by slug`,
    slugs,
  )) as { id: string; slug: string }[];
  const keys = new SigningKeyService(new Keyring(config.encryptionKeys));
  for (const tenant of tenants) {
    const kids = await keys.rotate(em, tenant.id);
    logger.info({ workspace: tenant.slug, kids }, 'new OpenID provider signing keys');
  }
  logger.info({ workspaces: tenants.length, previousKeysPublishedSeconds: RETIRED_KEY_PUBLISH_SECONDS }, 'signing keys rotated');
  return 0;
});
