import { loadConfigOrExit } from '../src/config.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/db/embedded.js';
import { DatabaseUnavailableError, openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/logger.js';
import { Keyring } from '../src/security/keyring.js';
import { reencryptSecrets } from '../src/services/keys/key-rotation.js';

/**
 * `npm run keys:rotate`: re-encrypts every field-encrypted secret under the newest key of
 * `ENCRYPTION_KEYS` (same environment as the service). Exits 0 when everything is current, 1 when a
 * ciphertext could not be decrypted, 2 on a configuration or database error. On the embedded database
 * (no `DATABASE_URL`) stop the service first: PGlite allows one process at a time.
 */
async function main(): Promise<number> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  let embedded: EmbeddedDatabase | undefined;
  try {
    if (!config.databaseUrl) embedded = await startEmbeddedDatabase(config.dataDir);
    const orm = await openDatabase(config.databaseUrl ?? embedded!.url, embedded ? 1 : undefined);
    try {
      const report = await reencryptSecrets(orm.em.fork(), new Keyring(config.encryptionKeys));
      if (report.failures.length > 0) {
        logger.error({ ...report }, 'some secrets could not be decrypted with the configured keys and were left unchanged');
        return 1;
      }
      logger.info({ ...report }, `every encrypted secret is now under key ${report.keyVersion}`);
      return 0;
    } finally {
      await orm.close(true);
    }
  } catch (err) {
    if (err instanceof DatabaseUnavailableError) {
      logger.fatal(err.message);
      return 2;
    }
    throw err;
  } finally {
    await embedded?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`key rotation failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
