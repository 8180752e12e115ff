import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { Keyring } from './security/keyring.js';
import { AccountService } from './services/account-service.js';
import { AuditService } from './services/audit-service.js';
import { AuthService } from './services/auth-service.js';
import { CredentialService } from './services/credential-service.js';
import { Mailer } from './services/mailer.js';
import { MfaService } from './services/mfa-service.js';
import { SessionService } from './services/session-service.js';
import { TenantService } from './services/tenant-service.js';

/** Every long-lived object of one service instance, built once at start-up (the composition root). */
export interface AppServices {
  config: Config;
  logger: Logger;
  orm: MikroORM;
  keyring: Keyring;
  mailer: Mailer;
  audit: AuditService;
  sessions: SessionService;
  tenants: TenantService;
  mfa: MfaService;
  auth: AuthService;
  accounts: AccountService;
  credentials: CredentialService;
  /** Named readiness probes for `GET /ready`; each rejects when its dependency does not answer. */
  readiness: Map<string, () => Promise<void>>;
  /** Closers run at shutdown after the HTTP server drained (Redis clients, mail transports, timers). */
  disposers: (() => Promise<void>)[];
}

/** Wires the services together; performs no I/O. */
export function createServices(config: Config, logger: Logger, orm: MikroORM): AppServices {
  const keyring = new Keyring(config.encryptionKeys);
  const audit = new AuditService(orm.em.getEventManager());
  const sessions = new SessionService(config, audit);
  const mfa = new MfaService();
  const mailer = new Mailer(config, logger);
  return {
    config,
    logger,
    orm,
    keyring,
    mailer,
    audit,
    sessions,
    tenants: new TenantService(sessions, audit),
    mfa,
    auth: new AuthService(sessions, mfa, audit),
    accounts: new AccountService(sessions, audit),
    credentials: new CredentialService(config, logger),
    disposers: [() => mailer.close()],
    readiness: new Map([['database', async () => void (await orm.em.execute('select 1'))]]),
  };
}
