/**
 * The identity providers the console's guided SSO setup knows (docs/sso.md "Setting up a provider");
 * `saml` and `oidc` stand for any other provider of that protocol. Kept apart from the lazily loaded
 * SSO pages because the router reads it (`?setup=<kind>` of the connection page).
 */
export const SSO_SETUP_KINDS = ['okta', 'entra', 'google', 'adfs', 'saml', 'oidc'] as const;
export type SsoSetupKind = (typeof SSO_SETUP_KINDS)[number];
