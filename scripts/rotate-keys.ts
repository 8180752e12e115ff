import '../src/node-version.js';
import { Keyring } from '../src/security/keyring.js';
import { reencryptSecrets } from '../src/services/keys/key-rotation.js';
import { runDatabaseScript } from './database-script.js';

/**
 * `npm run keys:rotate`: re-encrypts every field-encrypted secret under the newest key of
 * `ENCRYPTION_KEYS` (same environment as the service). Exits 0 when everything is current, 1 when a
 * ciphertext could not be decrypted, 2 on a configuration or database error. On the embedded database
 * (no `DATABASE_URL`) stop the service first: PGlite allows one process at a time.
 */
runDatabaseScript('key rotation', async (orm, config, logger) => {
  const report = await reencryptSecrets(orm.em.fork(), new Keyring(config.encryptionKeys));
  if (report.failures.length > 0) {
    logger.error({ ...report }, 'some secrets could not be decrypted with the configured keys and were left unchanged');
    return 1;
  }
  logger.info({ ...report }, `every encrypted secret is now under key ${report.keyVersion}`);
  return 0;
});
