import { hkdfSync } from 'node:crypto';
import { OrganizationMembershipService } from './services/organizations/organization-membership-service.js';
import { OrganizationRoleService } from './services/organizations/organization-role-service.js';
import { OrganizationService } from './services/organizations/organization-service.js';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { closeRedis, createRedisClient, pingRedis } from './db/redis.js';
import { databasePoolUse, pingDatabase } from './db/orm.js';
import { Keyring } from './security/keyring.js';
import { ApiResourceService } from './services/access-control/api-resource-service.js';
import { RoleAssignmentService } from './services/access-control/role-assignment-service.js';
import { RoleService } from './services/access-control/role-service.js';
import { ApplicationService } from './services/oidc/application-service.js';
import { purgeExpiredPayloads } from './queries/oidc-payload.js';
import { OidcProviderService } from './services/oidc/oidc-provider-service.js';
import { ProviderSessionRevocation } from './services/oidc/provider-session-revocation.js';
import { SigningKeyService } from './services/oidc/signing-keys.js';
import { AccountCredentialService } from './services/lifecycle/account-credentials.js';
import { UserImportService } from './services/users/user-import-service.js';
import { UserImportJobService } from './services/users/user-import-job-service.js';
import { UserAdministrationService } from './services/users/user-administration-service.js';
import { UserAccountService } from './services/users/user-account-service.js';
import { ApiKeyService } from './services/api-keys/api-key-service.js';
import { AuditLogService } from './services/audit/audit-log-service.js';
import { AuditExportService } from './services/audit/audit-export-service.js';
import { ActivityService } from './services/audit/activity-service.js';
import { UserProfileService } from './services/users/user-profile-service.js';
import { AuditService } from './services/audit/audit-service.js';
import { PasswordSignInService } from './services/sign-in/password-sign-in-service.js';
import { BearerAuthenticationService } from './services/sessions/bearer-authentication-service.js';
import { IdpProviderClient } from './services/idp/idp-provider-client.js';
import { IdpService } from './services/idp/idp-service.js';
import { IssuerChangeNotifier } from './services/idp/issuer-change-notice.js';
import { OidcConnectionSignIn } from './services/sso/oidc-connection-sign-in.js';
import { SamlService } from './services/sso/saml-service.js';
import { SsoEntry } from './services/sso/sso-entry.js';
import { SsoConnectionNotifier } from './services/sso/sso-connection-notice.js';
import { SsoConnectionService } from './services/sso/sso-connection-service.js';
import { SsoSignInService } from './services/sso/sso-sign-in-service.js';
import { EmailOtpService } from './services/mfa/email-otp-service.js';
import { InviteService } from './services/invites/invite-service.js';
import { LogoService } from './services/branding/logo-service.js';
import { Mailer } from './services/mail/mailer.js';
import { MailTransport } from './services/mail/mail-transport.js';
import { AccountMailRequests } from './services/lifecycle/account-mail-requests.js';
import { JobQueue } from './services/jobs/job-queue.js';
import { probeJobTable } from './queries/job.js';
import { JobWorker } from './services/jobs/job-worker.js';
import { QueuedPersonalData } from './services/mail/queued-personal-data.js';
import { WebhookDelivery } from './services/webhooks/webhook-delivery.js';
import { WebhookService } from './services/webhooks/webhook-service.js';
import { MfaService } from './services/mfa/mfa-service.js';
import { MfaSignInService } from './services/sign-in/mfa-sign-in-service.js';
import { EmailChangeService } from './services/lifecycle/email-change-service.js';
import { FactorChangeNotifier } from './services/mfa/factor-change-notice.js';
import { MfaEnrollmentService } from './services/mfa/mfa-enrollment-service.js';
import { RecoveryCodeService } from './services/mfa/recovery-code-service.js';
import { MfaChallengeService } from './services/sign-in/mfa-challenge-service.js';
import { AccountTokenService } from './services/lifecycle/account-token-service.js';
import { DataExportService } from './services/lifecycle/data-export-service.js';
import { EmailVerificationService } from './services/lifecycle/email-verification-service.js';
import { ErasureService } from './services/lifecycle/erasure-service.js';
import { PasswordResetService } from './services/lifecycle/password-reset-service.js';
import { RateLimitService } from './services/rate-limits/rate-limiter.js';
import { AccountLockoutService } from './services/rate-limits/account-lockout.js';
import { Metrics } from './services/metrics/metrics.js';
import { REFRESH_ANSWER_TTL_SECONDS, SessionService } from './services/sessions/session-service.js';
import { TenantService } from './services/tenants/tenant-service.js';
import { TotpService } from './services/mfa/totp-service.js';
import { TenantSettingsService } from './services/tenants/tenant-settings-service.js';
import { UserDirectoryService } from './services/users/user-directory-service.js';
import { PasskeyService } from './services/passkeys/passkey-service.js';

/** Every long-lived object of one service instance, built once at start-up (the composition root). */
export interface AppServices {
  config: Config;
  logger: Logger;
  orm: MikroORM;
  keyring: Keyring;
  mailer: Mailer;
  /** The durable job queue (mail, webhook deliveries; docs/events.md). */
  jobs: JobQueue;
  /** This instance's queue worker; started by startServer when `JOB_WORKER` is true, or by `npm run worker`. */
  jobWorker: JobWorker;
  webhooks: WebhookService;
  /** Mails asked for with an email alone, queued so the answer takes the same time for every email. */
  accountMailRequests: AccountMailRequests;
  audit: AuditService;
  sessions: SessionService;
  tenants: TenantService;
  totp: TotpService;
  emailOtp: EmailOtpService;
  mfa: MfaService;
  auth: PasswordSignInService;
  mfaSignIn: MfaSignInService;
  /** TOTP enrolment by a signed-in user, behind the recent-sign-in check. */
  mfaEnrollment: MfaEnrollmentService;
  /** Single-use TOTP recovery codes (docs/mfa.md "Recovery codes"). */
  recoveryCodes: RecoveryCodeService;
  /** The second step of a provider sign-in that needs a factor (`auth/mfa/complete`). */
  mfaChallenges: MfaChallengeService;
  accounts: UserAccountService;
  credentials: BearerAuthenticationService;
  /** External identity-provider sign-in (OpenID Connect authorization code + PKCE). */
  idp: IdpService;
  invites: InviteService;
  apiKeys: ApiKeyService;
  userDirectory: UserDirectoryService;
  tenantSettings: TenantSettingsService;
  /** A workspace's logo: uploaded or fetched, checked, stored and served (docs/web.md "Branding"). */
  logos: LogoService;
  auditLog: AuditLogService;
  /** GET audit/export: the filtered audit log streamed as CSV or JSON (docs/audit.md "Export"). */
  auditExport: AuditExportService;
  /** GET audit/activity: the console's start-page aggregates (docs/audit.md "Activity"). */
  activity: ActivityService;
  /** GET users/{userId}: a user with their factors and provider links. */
  userProfiles: UserProfileService;
  emailVerification: EmailVerificationService;
  passwordReset: PasswordResetService;
  /** Changing one's own sign-in email: the link to the new address, the notice to the old one (docs/lifecycle.md). */
  emailChange: EmailChangeService;
  dataExport: DataExportService;
  erasure: ErasureService;
  /** Passkeys (WebAuthn): registration, listing, deletion and passkey sign-in (docs/passkeys.md). */
  passkeys: PasskeyService;
  /** Rate limits (docs/api-rules.md "Rate limits"), shared through Redis when `REDIS_URL` is set. */
  rateLimits: RateLimitService;
  accountLockout: AccountLockoutService;
  /** An admin's changes to a user: role, suspension (docs/api-rules.md "Users and sign-up"). */
  userAdministration: UserAdministrationService;
  /** Moving users in and out: imports with their password hashes, the NDJSON export (docs/import.md). */
  userImport: UserImportService;
  /** Import jobs: large NDJSON files on the job queue (docs/import.md "Import jobs"). */
  userImportJobs: UserImportJobService;
  /** The tenant's applications: the clients of its OpenID Provider (docs/oidc.md). */
  applications: ApplicationService;
  /** The tenant's API resources and their permissions (docs/oidc.md "Roles and permissions"). */
  apiResources: ApiResourceService;
  /** The tenant's own roles (docs/oidc.md "Roles and permissions"). */
  roles: RoleService;
  /** Which roles users and m2m applications hold, and what they grant in tokens (docs/oidc.md "Roles and permissions"). */
  roleAssignments: RoleAssignmentService;
  /** The ES256 signing keys of each tenant's OpenID Provider. */
  signingKeys: SigningKeyService;
  /** The tenant's organizations: its own customers (docs/organizations.md). */
  organizations: OrganizationService;
  /** The tenant's organization-role template (docs/organizations.md "Roles"). */
  organizationRoles: OrganizationRoleService;
  /** Who belongs to which organization, with which organization roles (docs/organizations.md "Members"). */
  organizationMembers: OrganizationMembershipService;
  /** Each tenant as an OpenID Provider (docs/oidc.md). */
  oidc: OidcProviderService;
  /** Enterprise single sign-on connections (docs/sso.md "Connections"). */
  ssoConnections: SsoConnectionService;
  /** SAML 2.0 service provider: metadata, AuthnRequests, the assertion consumer service (docs/sso.md). */
  saml: SamlService;
  /** OpenID Connect enterprise connections: the code flow and its callback (docs/sso.md). */
  oidcConnections: OidcConnectionSignIn;
  /** Where a single sign-on starts: the connection of an address's domain, or an Admin's test (docs/sso.md). */
  ssoEntry: SsoEntry;
  /** The end of a single sign-on: the person, their organization, the session (docs/sso.md "Who is signed in"). */
  ssoSignIn: SsoSignInService;
  /** Named readiness probes for `GET /ready`; each rejects when its dependency does not answer. */
  readiness: Map<string, () => Promise<void>>;
  /** Prometheus metrics when `METRICS_ENABLED` (served on `METRICS_PORT`, docs/operations.md "Metrics"). */
  metrics?: Metrics;
  /** Closers run at shutdown after the HTTP server drained (Redis clients, mail transports, timers). */
  disposers: (() => Promise<void>)[];
}



/**
 * Wires the services together. The only I/O it starts is the background connection to Redis when
 * `REDIS_URL` is set (the client is closed by a disposer and probed by the `redis` readiness check).
 */
export function createServices(config: Config, logger: Logger, orm: MikroORM): AppServices {
  const keyring = new Keyring(config.encryptionKeys);
  const audit = new AuditService(config.jobQueue);
  const sessions = new SessionService(config, audit, keyring, new ProviderSessionRevocation());
  const jobs = new JobQueue(orm, config.jobQueue);
  const queuedPersonalData = new QueuedPersonalData(keyring);
  const mailer = new Mailer(jobs, keyring, new MailTransport(config, logger), logger, config.publicUrl);
  const redis = config.redisUrl ? createRedisClient(config.redisUrl, logger) : undefined;
  // keys reach Redis as HMACs under a key derived from JWT_SECRET (shared by every instance, never stored)
  const rateLimitKeySecret = Buffer.from(hkdfSync('sha256', config.jwtSecret, Buffer.alloc(0), 'tenant-identity rate-limit keys', 32));
  const rateLimits = new RateLimitService({ scale: config.rateLimitScale, keyPrefix: config.redisKeyPrefix, keySecret: rateLimitKeySecret, redis, logger });
  const accountLockout = new AccountLockoutService(rateLimits);
  const metrics = config.metricsEnabled
    ? new Metrics({
        queueStats: () => jobs.stats(),
        pool: () => databasePoolUse(orm),
        rateLimits: () => ({ shared: rateLimits.storeShared(), fallbackDecisions: rateLimits.fallbackDecisions, rejections: rateLimits.rejections }),
      })
    : undefined;
  const jobWorker = new JobWorker(jobs, logger, {
    pollIntervalMs: config.jobPollIntervalMs,
    retryBaseSeconds: config.jobRetryBaseSeconds,
    onRun: metrics && ((kind, outcome) => metrics.jobRun(kind, outcome)),
  });
  const webhookDelivery = new WebhookDelivery(config, orm, keyring, mailer, logger, metrics && ((outcome) => metrics.webhookDelivery(outcome)));
  jobWorker.handle('mail.send', (job) => mailer.deliver(job));
  const userImport = new UserImportService(audit, keyring);
  const userImportJobs = new UserImportJobService(orm, jobs, userImport);
  jobWorker.handle('users.import', (job) => userImportJobs.run(job));
  jobWorker.handle('webhook.deliver', (job, retryIn) => webhookDelivery.deliver(job, retryIn));
  jobWorker.every(config.jobRetentionSweepSeconds, 'retention', async () => {
    const purged = await jobs.purgeExpired(config.jobFailedRetentionDays, config.webhookDeliveryRetentionDays);
    if (purged.failedJobs || purged.deliveries) logger.info({ purged }, 'job queue retention sweep deleted expired rows');
    const oidcPayloads = await purgeExpiredPayloads(orm.em.fork() as EntityManager);
    if (oidcPayloads) logger.info({ oidcPayloads }, 'retention sweep deleted expired OpenID provider rows');
    const abandonedImports = await userImportJobs.sweepAbandoned();
    if (abandonedImports) logger.info({ abandonedImports }, 'retention sweep deleted import jobs whose upload stopped');
    const ssoRows = await ssoEntry.sweepExpired(orm.em.fork() as EntityManager);
    if (ssoRows) logger.info({ ssoRows }, 'retention sweep deleted expired SSO requests and assertion ids');
    // kept invite answers (Idempotency-Key) live 24 hours; this sweep frees their rows afterwards
    const inviteAnswers = await invites.purgeExpiredAnswers(orm.em.fork() as EntityManager);
    if (inviteAnswers) logger.info({ inviteAnswers }, 'retention sweep deleted expired invite answers');
  });
  // Kept refresh answers (Idempotency-Key) live 60 s; the sweep frees their rows every minute.
  jobWorker.every(REFRESH_ANSWER_TTL_SECONDS, 'refresh-answers', async () => {
    await sessions.purgeExpiredAnswers(orm.em.fork() as EntityManager);
  });
  const factorNotices = new FactorChangeNotifier(mailer);
  const recoveryCodes = new RecoveryCodeService(audit, factorNotices);
  const totp = new TotpService(keyring, audit, factorNotices, recoveryCodes);
  const emailOtp = new EmailOtpService(config, mailer, audit);
  const mfa = new MfaService(totp, emailOtp, audit, recoveryCodes);
  const auth = new PasswordSignInService(sessions, mfa, audit);
  const accountTokens = new AccountTokenService(mailer);
  const accountCredentials = new AccountCredentialService(sessions, audit);
  const signingKeys = new SigningKeyService(keyring);
  const applications = new ApplicationService(keyring, audit);
  const apiResources = new ApiResourceService(audit);
  const roleAssignments = new RoleAssignmentService(audit);
  const organizationRoles = new OrganizationRoleService(audit);
  const organizationMembers = new OrganizationMembershipService(organizationRoles, audit);
  const invites = new InviteService(config, sessions, mailer, audit, organizationMembers, keyring);
  const accounts = new UserAccountService(sessions, audit, accountTokens, queuedPersonalData);
  const mfaChallenges = new MfaChallengeService(auth, mfa);
  const idpProvider = new IdpProviderClient(logger, { defaultIssuer: config.idpIssuer, allowPrivateIssuers: config.idpAllowPrivateIssuers });
  const ssoConnections = new SsoConnectionService(config, keyring, idpProvider, organizationRoles, audit, new SsoConnectionNotifier(mailer));
  const saml = new SamlService(keyring, ssoConnections, audit);
  const oidcConnections = new OidcConnectionSignIn(keyring, idpProvider, ssoConnections, audit);
  const ssoEntry = new SsoEntry(keyring, ssoConnections, saml, oidcConnections);
  const emailVerification = new EmailVerificationService(config, accountTokens, audit);
  const passwordReset = new PasswordResetService(config, accountTokens, sessions, emailVerification, audit, accountCredentials);
  // A pooled connection the server has just dropped fails once and is discarded: the probe tries a
  // second connection before reporting the database down (the job worker keeps the pool busy, so a
  // probe right after a failover may draw such a connection).
  const probe = (query: (em: EntityManager) => Promise<void>) => async () => {
    await query(orm.em.fork()).catch(() => query(orm.em.fork()));
  };
  const readiness = new Map<string, () => Promise<void>>([
    ['database', probe(pingDatabase)],
    ['queue', probe(probeJobTable)],
  ]);
  const disposers: (() => Promise<void>)[] = [() => mailer.close()];
  if (redis) {
    readiness.set('redis', () => pingRedis(redis));
    disposers.push(() => closeRedis(redis));
  }
  const services: Omit<AppServices, 'accountMailRequests'> = {
    config,
    logger,
    orm,
    keyring,
    mailer,
    jobs,
    jobWorker,
    webhooks: new WebhookService(config, keyring, jobs, audit),
    audit,
    sessions,
    tenants: new TenantService(sessions, audit, emailVerification),
    totp,
    emailOtp,
    mfa,
    auth,
    mfaSignIn: new MfaSignInService(auth, mfa, totp, emailOtp, logger),
    mfaEnrollment: new MfaEnrollmentService(accounts, totp, recoveryCodes, audit, factorNotices),
    recoveryCodes,
    mfaChallenges,
    accounts,
    credentials: new BearerAuthenticationService(config, logger),
    idp: new IdpService(config, keyring, idpProvider, auth, mfa, mfaChallenges, sessions, audit, accountCredentials, new IssuerChangeNotifier(mailer)),
    invites,
    apiKeys: new ApiKeyService(audit),
    userDirectory: new UserDirectoryService(),
    tenantSettings: new TenantSettingsService(audit),
    logos: new LogoService(audit, config.idpAllowPrivateIssuers),
    auditLog: new AuditLogService(),
    auditExport: new AuditExportService(),
    activity: new ActivityService(),
    userProfiles: new UserProfileService(recoveryCodes),
    emailVerification,
    passwordReset,
    emailChange: new EmailChangeService(config, accountTokens, mailer, audit),
    dataExport: new DataExportService(audit),
    erasure: new ErasureService(config, logger, audit, queuedPersonalData),
    passkeys: new PasskeyService(config, auth, audit, factorNotices),
    rateLimits,
    accountLockout,
    metrics,
    userAdministration: new UserAdministrationService(sessions, audit, passwordReset, emailVerification, accountLockout, config.userRetentionDays),
    userImport,
    userImportJobs,
    applications,
    apiResources,
    roles: new RoleService(audit),
    roleAssignments,
    signingKeys,
    organizations: new OrganizationService(audit),
    organizationRoles,
    organizationMembers,
    oidc: new OidcProviderService(config, orm, applications, signingKeys, sessions, audit, logger, { apiResources, roleAssignments }),
    ssoConnections,
    saml,
    oidcConnections,
    ssoEntry,
    ssoSignIn: new SsoSignInService(keyring, auth, mfa, mfaChallenges, organizationMembers, accountCredentials, audit),
    disposers,
    readiness,
  };
  const accountMailRequests = new AccountMailRequests(orm, jobs, services.mfaSignIn, services.passwordReset, services.emailVerification, keyring);
  jobWorker.handle('account-mail.request', (job) => accountMailRequests.run(job));
  return { ...services, accountMailRequests };
}
