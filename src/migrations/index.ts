import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261123000000_initial } from './Migration20261123000000_initial.js';
import { Migration20261123030000_idp } from './Migration20261123030000_idp.js';
import { Migration20261123010000_email_otp } from './Migration20261123010000_email_otp.js';
import { Migration20261123020000_invites_audit_search } from './Migration20261123020000_invites_audit_search.js';
import { Migration20261123040000_account_token } from './Migration20261123040000_account_token.js';
import { Migration20261123050000_account_takeover } from './Migration20261123050000_account_takeover.js';
import { Migration20261123060000_jobs_webhooks } from './Migration20261123060000_jobs_webhooks.js';
import { Migration20261123070000_idp_browser_binding } from './Migration20261123070000_idp_browser_binding.js';
import { Migration20261123080000_passkeys } from './Migration20261123080000_passkeys.js';
import { Migration20261123090000_recovery_codes_sessions } from './Migration20261123090000_recovery_codes_sessions.js';
import { Migration20261123100000_tenant_idp_issuer } from './Migration20261123100000_tenant_idp_issuer.js';
import { Migration20261123110000_job_queue_retention } from './Migration20261123110000_job_queue_retention.js';
import { Migration20261124020000_idp_link_proof } from './Migration20261124020000_idp_link_proof.js';
import { Migration20261124050000_refresh_answer } from './Migration20261124050000_refresh_answer.js';
import { Migration20261124050100_webhook_delivery_attempting } from './Migration20261124050100_webhook_delivery_attempting.js';
import { Migration20261124100000_oidc_provider } from './Migration20261124100000_oidc_provider.js';
import { Migration20261124110000_user_administration } from './Migration20261124110000_user_administration.js';
import { Migration20261124120000_email_change } from './Migration20261124120000_email_change.js';
import { Migration20261124130000_audit_daily_count } from './Migration20261124130000_audit_daily_count.js';
import { Migration20261124160000_languages } from './Migration20261124160000_languages.js';
import { Migration20261124170000_branding } from './Migration20261124170000_branding.js';
import { Migration20261126100000_sessions_end_everywhere } from './Migration20261126100000_sessions_end_everywhere.js';
import { Migration20261126120000_access_control } from './Migration20261126120000_access_control.js';
import { Migration20261126130000_user_import } from './Migration20261126130000_user_import.js';
import { Migration20261126140000_workspace_policies } from './Migration20261126140000_workspace_policies.js';
import { Migration20261126150000_organizations } from './Migration20261126150000_organizations.js';
import { Migration20261126160000_sso_connections } from './Migration20261126160000_sso_connections.js';
import { Migration20261126170000_organizations_at_scale } from './Migration20261126170000_organizations_at_scale.js';
import { Migration20261127030000_refresh_writes_no_session } from './Migration20261127030000_refresh_writes_no_session.js';
import { Migration20261127100000_user_profile } from './Migration20261127100000_user_profile.js';
import { Migration20261127110000_branding_variants } from './Migration20261127110000_branding_variants.js';
import { Migration20261127120000_spanish } from './Migration20261127120000_spanish.js';
import { Migration20261128100000_invite_answer } from './Migration20261128100000_invite_answer.js';

/**
 * Every committed migration, in the order it is applied. Listed explicitly so the same list runs
 * from TypeScript sources (tests) and compiled output (npm start). A new migration is appended here.
 */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261123000000_initial', class: Migration20261123000000_initial },
  { name: 'Migration20261123010000_email_otp', class: Migration20261123010000_email_otp },
  { name: 'Migration20261123020000_invites_audit_search', class: Migration20261123020000_invites_audit_search },
  { name: 'Migration20261123030000_idp', class: Migration20261123030000_idp },
  { name: 'Migration20261123040000_account_token', class: Migration20261123040000_account_token },
  { name: 'Migration20261123050000_account_takeover', class: Migration20261123050000_account_takeover },
  { name: 'Migration20261123060000_jobs_webhooks', class: Migration20261123060000_jobs_webhooks },
  { name: 'Migration20261123070000_idp_browser_binding', class: Migration20261123070000_idp_browser_binding },
  { name: 'Migration20261123080000_passkeys', class: Migration20261123080000_passkeys },
  { name: 'Migration20261123090000_recovery_codes_sessions', class: Migration20261123090000_recovery_codes_sessions },
  { name: 'Migration20261123100000_tenant_idp_issuer', class: Migration20261123100000_tenant_idp_issuer },
  { name: 'Migration20261123110000_job_queue_retention', class: Migration20261123110000_job_queue_retention },
  { name: 'Migration20261124020000_idp_link_proof', class: Migration20261124020000_idp_link_proof },
  { name: 'Migration20261124050000_refresh_answer', class: Migration20261124050000_refresh_answer },
  { name: 'Migration20261124050100_webhook_delivery_attempting', class: Migration20261124050100_webhook_delivery_attempting },
  { name: 'Migration20261124100000_oidc_provider', class: Migration20261124100000_oidc_provider },
  { name: 'Migration20261124110000_user_administration', class: Migration20261124110000_user_administration },
  { name: 'Migration20261124120000_email_change', class: Migration20261124120000_email_change },
  { name: 'Migration20261124130000_audit_daily_count', class: Migration20261124130000_audit_daily_count },
  { name: 'Migration20261124160000_languages', class: Migration20261124160000_languages },
  { name: 'Migration20261124170000_branding', class: Migration20261124170000_branding },
  { name: 'Migration20261126100000_sessions_end_everywhere', class: Migration20261126100000_sessions_end_everywhere },
  { name: 'Migration20261126120000_access_control', class: Migration20261126120000_access_control },
  { name: 'Migration20261126130000_user_import', class: Migration20261126130000_user_import },
  { name: 'Migration20261126140000_workspace_policies', class: Migration20261126140000_workspace_policies },
  { name: 'Migration20261126150000_organizations', class: Migration20261126150000_organizations },
  { name: 'Migration20261126160000_sso_connections', class: Migration20261126160000_sso_connections },
  { name: 'Migration20261126170000_organizations_at_scale', class: Migration20261126170000_organizations_at_scale },
  { name: 'Migration20261127030000_refresh_writes_no_session', class: Migration20261127030000_refresh_writes_no_session },
  { name: 'Migration20261127100000_user_profile', class: Migration20261127100000_user_profile },
  { name: 'Migration20261127110000_branding_variants', class: Migration20261127110000_branding_variants },
  { name: 'Migration20261127120000_spanish', class: Migration20261127120000_spanish },
  { name: 'Migration20261128100000_invite_answer', class: Migration20261128100000_invite_answer },
];
