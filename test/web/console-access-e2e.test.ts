import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { answerConfirmation, axeBothThemes, buildAndLaunchChromium, CHROMIUM, DESKTOP, fitsPhone, hasChromium, PHONE, SCREENSHOTS, signedInPage } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { forgingIdp } from '../helpers/saml-forge.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The console pages of roles and permissions and of organizations (docs/web.md "Console") driven in
 * Chromium against the real service: API resources, roles, roles on the user and m2m application
 * pages, organizations with members and organization roles; each page scanned with axe in both themes.
 */
if (!hasChromium) console.warn(`console-access-e2e: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)`);
const INVOICES_API = 'https://api.example.com/invoices';

describe.skipIf(!hasChromium)('console pages for roles, permissions and organizations', () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let admin: Page;
  let member: { email: string; id: string };
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];

  /** On a failure: a screenshot of the admin's page and the browser's errors. */
  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await admin?.screenshot({ path: path.join(SCREENSHOTS, `failed-console-access-${name}.png`), fullPage: true }).catch(() => undefined);
      console.error(`browser errors:\n${pageErrors.join('\n')}\npage: ${admin?.url()}`);
    });
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    server = await startTestServer({});
    api = new Api(server.url);
    tenant = await createTenant(api);
    member = await signupMember(api, tenant.slug);
    const context = await browser.newContext({ viewport: DESKTOP });
    contexts.push(context);
    admin = await signedInPage(context, server.url, tenant.slug, tenant.adminEmail, PASSWORD, pageErrors);
  }, 300_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  it('registers an API resource with two permissions from its empty state, edits its permissions and deletes another', async () => {
    diagnoseOnFailure('api-resources');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin`);
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'API resources' }).click();
    await admin.getByRole('heading', { name: 'API resources', exact: true }).waitFor();
    // the empty state says what a resource is for and how a backend checks a permission with jose
    const snippet = admin.getByRole('region', { name: 'Verifying an access token with jose' });
    await snippet.waitFor();
    const code = (await snippet.textContent()) ?? '';
    expect(code).toContain(`const ISSUER = '${server.url}/v1/${tenant.slug}/oidc';\nconst AUDIENCE = '${INVOICES_API}';`);
    expect(code).toContain("jwtVerify(token, jwks, { issuer: ISSUER, audience: AUDIENCE, typ: 'at+jwt' })");
    expect(code).toContain("if (!granted.includes('read:invoices'))");
    expect(await axeBothThemes(admin, 'api resources empty')).toEqual([]);
    await fitsPhone(admin, 'admin-api-resources-empty');

    await admin.getByLabel('Name', { exact: true }).fill('Invoices API');
    await admin.getByLabel('Identifier').fill(INVOICES_API);
    await admin.getByLabel('Name of permission 1').fill('read:invoices');
    await admin.getByLabel('Description of permission 1').fill('Read invoices');
    await admin.getByRole('button', { name: 'Add a permission' }).click();
    await admin.getByLabel('Name of permission 2').fill('write:invoices');
    await admin.getByRole('button', { name: 'Add API resource' }).click();
    await admin.getByText('Invoices API was added.').waitFor();
    const row = admin.getByRole('row', { name: /Invoices API/ });
    expect(await row.getByRole('cell').allTextContents()).toEqual(['Invoices API', INVOICES_API, '2', 'EditDelete']);
    const stored = await api.get(`/v1/${tenant.slug}/api-resources`, { token: tenant.accessToken });
    expect(stored.body.items[0].permissions).toEqual([{ name: 'read:invoices', description: 'Read invoices' }, { name: 'write:invoices', description: '' }]);
    // a duplicate permission name is refused with its reason, the form keeps what was typed
    await admin.getByLabel('Name', { exact: true }).fill('Broken');
    await admin.getByLabel('Identifier').fill('https://api.example.com/broken');
    await admin.getByLabel('Name of permission 1').fill('a');
    await admin.getByRole('button', { name: 'Add a permission' }).click();
    await admin.getByLabel('Name of permission 2').fill('a');
    await admin.getByRole('button', { name: 'Add API resource' }).click();
    await admin.getByRole('alert').waitFor();
    expect(await admin.getByLabel('Name', { exact: true }).inputValue()).toBe('Broken');

    // edit: a third permission added and saved (the list comes back sorted by name), then removed again
    await admin.getByRole('button', { name: 'Edit Invoices API' }).click();
    const editor = admin.getByRole('region', { name: 'Edit Invoices API' });
    await editor.getByRole('button', { name: 'Add a permission' }).click();
    await editor.getByLabel('Name of permission 3').fill('approve:invoices');
    await editor.getByRole('button', { name: 'Save Invoices API' }).click();
    await admin.getByText('Invoices API was saved. Tokens issued from now on carry the change.').waitFor();
    await expect.poll(() => row.getByRole('cell').nth(2).textContent()).toBe('3');
    await admin.getByRole('button', { name: 'Edit Invoices API' }).click();
    await editor.getByRole('button', { name: 'Remove permission 1 (approve:invoices)' }).click();
    await editor.getByRole('button', { name: 'Save Invoices API' }).click();
    await expect.poll(() => row.getByRole('cell').nth(2).textContent()).toBe('2');

    // a second resource, deleted after the confirmation
    await admin.getByLabel('Name', { exact: true }).fill('Reports API');
    await admin.getByLabel('Identifier').fill('https://api.example.com/reports');
    await admin.getByLabel('Name of permission 1').fill('read:reports');
    await admin.getByLabel('Name of permission 2').fill('');
    await admin.getByRole('button', { name: 'Add API resource' }).click();
    await admin.getByText('Reports API was added.').waitFor();
    expect(await axeBothThemes(admin, 'api resources list')).toEqual([]);
    await fitsPhone(admin, 'admin-api-resources');
    await admin.getByRole('button', { name: 'Delete Reports API' }).click();
    expect(await answerConfirmation(admin, 'Delete API resource')).toContain('Delete Reports API?');
    await admin.getByText('Reports API was deleted.').waitFor();
    expect(await admin.getByRole('row', { name: /Reports API/ }).count()).toBe(0);
  });

  it('creates a role granting one of the two permissions, picked under its resource, and edits it', async () => {
    diagnoseOnFailure('roles');
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Roles' }).click();
    await admin.getByRole('heading', { name: 'Roles', exact: true }).waitFor();
    await admin.getByText(/^No roles yet\./).waitFor();
    expect(await axeBothThemes(admin, 'roles empty')).toEqual([]);
    const group = admin.getByRole('group', { name: `Permissions of Invoices API ${INVOICES_API}` });
    expect(await group.getByRole('checkbox').count()).toBe(2);
    await admin.getByLabel('Name', { exact: true }).fill('Accountant');
    await admin.getByLabel('Description', { exact: true }).fill('Reads the books');
    await group.getByLabel('read:invoices').check();
    await admin.getByRole('button', { name: 'Create role' }).click();
    await admin.getByText('The role Accountant was created.').waitFor();
    const row = admin.getByRole('row', { name: /Accountant/ });
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('read:invoices (Invoices API)');
    const roles = await api.get(`/v1/${tenant.slug}/roles`, { token: tenant.accessToken });
    expect(roles.body.items).toMatchObject([{ name: 'Accountant', description: 'Reads the books', permissions: [{ resource: INVOICES_API, permission: 'read:invoices' }] }]);

    // a second role, edited to grant both, then deleted
    await admin.getByLabel('Name', { exact: true }).fill('Clerk');
    await group.getByLabel('write:invoices').check();
    await admin.getByRole('button', { name: 'Create role' }).click();
    await admin.getByText('The role Clerk was created.').waitFor();
    await admin.getByRole('button', { name: 'Edit the role Clerk' }).click();
    const editor = admin.getByRole('region', { name: 'Edit the role Clerk' });
    await editor.getByText('No one holds this role yet.').waitFor();
    await editor.getByRole('group', { name: /Permissions of Invoices API/ }).getByLabel('read:invoices').check();
    await editor.getByRole('button', { name: 'Save Clerk' }).click();
    await admin.getByText('The role Clerk was saved. Tokens issued from now on carry the change.').waitFor();
    await expect.poll(() => admin.getByRole('row', { name: /Clerk/ }).getByRole('cell').nth(2).textContent()).toBe('read:invoices (Invoices API), write:invoices (Invoices API)');
    expect(await axeBothThemes(admin, 'roles list')).toEqual([]);
    await fitsPhone(admin, 'admin-roles');
    await admin.getByRole('button', { name: 'Delete the role Clerk' }).click();
    await answerConfirmation(admin, 'Delete role');
    await admin.getByText('The role Clerk was deleted.').waitFor();
  });
  it('gives the role to a person on their user page (PUT replaces the set), takes it away and gives it again', async () => {
    diagnoseOnFailure('user-roles');
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Users' }).click();
    await admin.getByRole('link', { name: member.email }).click();
    await admin.getByRole('heading', { name: member.email, level: 1 }).waitFor();
    const roles = admin.getByRole('region', { name: 'Roles' });
    await roles.getByText(`${member.email} holds no role.`).waitFor();
    const held = async () => (await api.get(`/v1/${tenant.slug}/users/${member.id}/roles`, { token: tenant.accessToken })).body.roles.map((r: { name: string }) => r.name);
    await roles.getByLabel(`Role to give ${member.email}`).selectOption({ label: 'Accountant' });
    await roles.getByRole('button', { name: 'Give role' }).click();
    await roles.getByText(`${member.email} now holds the role Accountant.`).waitFor();
    expect(await roles.getByRole('list', { name: `Roles of ${member.email}` }).getByRole('listitem').allTextContents()).toEqual(['Accountant Remove']);
    expect(await held()).toEqual(['Accountant']);
    expect(await axeBothThemes(admin, 'user page with roles')).toEqual([]);
    await fitsPhone(admin, 'admin-user-roles');

    await roles.getByRole('button', { name: `Remove the role Accountant from ${member.email}` }).click();
    await roles.getByText(`${member.email} no longer holds the role Accountant.`).waitFor();
    expect(await held()).toEqual([]);
    await roles.getByLabel(`Role to give ${member.email}`).selectOption({ label: 'Accountant' });
    await roles.getByRole('button', { name: 'Give role' }).click();
    await roles.getByText(`${member.email} now holds the role Accountant.`).waitFor();
    expect(await held()).toEqual(['Accountant']);
    // the audit log names the change
    const audit = await api.get(`/v1/${tenant.slug}/audit?action=UserRolesChanged`, { token: tenant.accessToken });
    expect(audit.body.items.length).toBe(3);
  });

  it('gives the role to a machine-to-machine application on the applications page; a web application has no roles section', async () => {
    diagnoseOnFailure('application-roles');
    const m2m = await api.post(`/v1/${tenant.slug}/applications`, { name: 'Billing sync', type: 'm2m' }, { token: tenant.accessToken });
    expect(m2m.status).toBe(200);
    const web = await api.post(`/v1/${tenant.slug}/applications`, { name: 'Web shop', type: 'web', redirectUris: ['https://shop.example.com/cb'] }, { token: tenant.accessToken });
    expect(web.status).toBe(200);
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Applications' }).click();
    const panel = admin.getByRole('region', { name: /Billing sync/ });
    await panel.getByText('Billing sync holds no role.').waitFor();
    expect(await admin.getByRole('region', { name: /Web shop/ }).getByLabel(/Role to give/).count()).toBe(0);
    await panel.getByLabel('Role to give Billing sync').selectOption({ label: 'Accountant' });
    await panel.getByRole('button', { name: 'Give role' }).click();
    await panel.getByText('Billing sync now holds the role Accountant.').waitFor();
    const held = await api.get(`/v1/${tenant.slug}/applications/${m2m.body.application.id}/roles`, { token: tenant.accessToken });
    expect(held.body.roles.map((r: { name: string }) => r.name)).toEqual(['Accountant']);
    expect(await axeBothThemes(admin, 'applications with roles')).toEqual([]);
    await fitsPhone(admin, 'admin-applications-roles');

    // the role's editor lists who holds it, each linking to their page
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Roles' }).click();
    await admin.getByRole('button', { name: 'Edit the role Accountant' }).click();
    const holders = admin.getByRole('list', { name: 'Holders of the role Accountant' });
    await holders.getByRole('link', { name: 'Billing sync' }).waitFor();
    expect(await holders.getByRole('listitem').allTextContents()).toEqual([`${member.email} · user`, 'Billing sync · application']);
    expect(await axeBothThemes(admin, 'role holders')).toEqual([]);
    await holders.getByRole('link', { name: member.email }).click();
    await admin.getByRole('heading', { name: member.email, level: 1 }).waitFor();
  });
  it('defines organization roles, creates an organization from the empty state and finds it by search', async () => {
    diagnoseOnFailure('organizations');
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Organizations' }).click();
    await admin.getByRole('heading', { name: 'Organizations', exact: true }).waitFor();
    await admin.getByText(/^No organizations yet\./).waitFor();
    await admin.getByText('No organization roles yet.').waitFor();
    expect(await axeBothThemes(admin, 'organizations empty')).toEqual([]);
    await fitsPhone(admin, 'admin-organizations-empty');

    const rolesSection = admin.getByRole('region', { name: 'Organization roles' });
    const newRole = rolesSection.getByRole('form', { name: 'Create an organization role' });
    for (const [name, permissions] of [['Owner', 'manage:billing, invite:members'], ['Billing', 'manage:billing']] as const) {
      await newRole.getByLabel('Name', { exact: true }).fill(name);
      await newRole.getByLabel('Organization permissions').fill(permissions);
      await newRole.getByRole('button', { name: 'Create organization role' }).click();
      await rolesSection.getByText(`The organization role ${name} was created.`).waitFor();
    }
    const stored = await api.get(`/v1/${tenant.slug}/organization-roles`, { token: tenant.accessToken });
    expect(stored.body.items.map((r: { name: string; permissions: string[] }) => [r.name, [...r.permissions].sort()])).toEqual([
      ['Billing', ['manage:billing']], ['Owner', ['invite:members', 'manage:billing']],
    ]);
    // an organization role edited in place
    await rolesSection.getByRole('button', { name: 'Edit the organization role Billing' }).click();
    const edit = rolesSection.getByRole('form', { name: 'Edit the organization role Billing' });
    await edit.getByLabel('Description', { exact: true }).fill('Pays the invoices');
    await edit.getByRole('button', { name: 'Save Billing' }).click();
    await rolesSection.getByText('The organization role Billing was saved.').waitFor();
    await rolesSection.getByText('Billing · Pays the invoices').waitFor();

    await admin.getByRole('region', { name: 'Create an organization' }).getByLabel('Name', { exact: true }).fill('Globex');
    await admin.getByRole('region', { name: 'Create an organization' }).getByLabel('Description', { exact: true }).fill('Our first customer');
    await admin.getByRole('button', { name: 'Create organization', exact: true }).click();
    await admin.getByRole('heading', { name: 'Globex', level: 1 }).waitFor();
    await admin.getByText('No members yet.').waitFor();
    expect((await api.post(`/v1/${tenant.slug}/organizations`, { name: 'Initech' }, { token: tenant.accessToken })).status).toBe(200);
    await admin.getByRole('link', { name: '← All organizations' }).click();
    await admin.getByRole('status').getByText('2 organizations, all shown.').waitFor();
    await admin.getByLabel('Search by name').fill('glob');
    await admin.getByRole('status').getByText('1 organization, all shown.').waitFor();
    expect(await admin.getByRole('row').nth(1).getByRole('cell').first().textContent()).toBe('Globex');
    expect(await axeBothThemes(admin, 'organizations list')).toEqual([]);
    await fitsPhone(admin, 'admin-organizations');
  });

  it('adds a member to an organization with an organization role, changes the roles, removes and adds them again', async () => {
    diagnoseOnFailure('organization-members');
    await admin.getByRole('link', { name: 'Globex' }).click();
    await admin.getByRole('heading', { name: 'Globex', level: 1 }).waitFor();
    const organizationId = new URL(admin.url()).pathname.split('/').at(-1)!;
    const rolesOfMember = async () => {
      const members = await api.get(`/v1/${tenant.slug}/organizations/${organizationId}/members`, { token: tenant.accessToken });
      return members.body.items.map((m: { user: { email: string }; roles: string[] }) => [m.user.email, m.roles]);
    };
    const add = admin.getByRole('region', { name: 'Add a member' });
    const addMember = async () => {
      await add.getByLabel('Find a user by email').fill(member.email.slice(0, 12));
      await expect.poll(() => add.getByLabel('User', { exact: true }).locator('option').allTextContents()).toContain(member.email);
      await add.getByLabel('User', { exact: true }).selectOption({ label: member.email });
      await add.getByRole('group', { name: 'Organization roles of the new member' }).getByLabel('Owner').check();
      await add.getByRole('button', { name: 'Add member' }).click();
      await admin.getByText(`${member.email} is now a member.`).waitFor();
    };
    await addMember();
    const memberList = admin.getByRole('list', { name: 'Members of Globex' });
    const roles = memberList.getByRole('group', { name: `Organization roles of ${member.email}` });
    expect(await roles.getByLabel('Owner').isChecked()).toBe(true);
    expect(await roles.getByLabel('Billing').isChecked()).toBe(false);
    expect(await rolesOfMember()).toEqual([[member.email, ['Owner']]]);
    await admin.getByRole('heading', { name: '1 member', exact: true }).waitFor();
    expect(await axeBothThemes(admin, 'organization page')).toEqual([]);
    await fitsPhone(admin, 'admin-organization');

    await roles.getByLabel('Billing').check();
    await roles.getByLabel('Owner').uncheck();
    await memberList.getByRole('button', { name: `Save roles of ${member.email}` }).click();
    await admin.getByText(`The organization roles of ${member.email} were saved.`).waitFor();
    expect(await rolesOfMember()).toEqual([[member.email, ['Billing']]]);

    await memberList.getByRole('button', { name: `Remove ${member.email} from the organization` }).click();
    await answerConfirmation(admin, 'Remove member');
    await admin.getByText(`${member.email} was removed from the organization.`).waitFor();
    await admin.getByText('No members yet.').waitFor();
    expect(await rolesOfMember()).toEqual([]);
    await addMember();
    expect(await rolesOfMember()).toEqual([[member.email, ['Owner']]]);
    // the person sees the organization as theirs
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    const mine = await api.get(`/v1/${tenant.slug}/me/organizations`, { token: login.body.accessToken });
    expect(mine.body.items).toEqual([{ id: organizationId, name: 'Globex', roles: ['Owner'] }]);
  });

  it('invites a new person into the organization with an organization role; they accept from the link and land as a member', async () => {
    diagnoseOnFailure('organization-invite');
    const invitee = `invitee-${Date.now().toString(36)}@example.com`;
    const section = admin.getByRole('region', { name: 'Invite into the organization' });
    await section.getByLabel('Email of the person to invite').fill(invitee);
    await section.getByRole('group', { name: 'Organization roles of the invited person' }).getByLabel('Billing').check();
    await section.getByRole('button', { name: 'Send invite' }).click();
    await section.getByText(`An invitation into the organization was mailed to ${invitee}.`).waitFor();
    const link = await section.getByLabel('Invite link', { exact: true }).inputValue();
    expect(new URL(link).pathname).toBe(`/app/${tenant.slug}/accept-invite`);
    const organizationId = new URL(admin.url()).pathname.split('/').at(-1)!;

    const context = await browser.newContext({ viewport: PHONE });
    contexts.push(context);
    const person = await context.newPage();
    await person.goto(link);
    await person.getByLabel('Choose a password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Accept invite' }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    // the account page lists the person's organizations with their roles there
    const mine = person.getByRole('list', { name: 'Organizations you belong to' });
    await mine.getByText('Globex', { exact: true }).waitFor();
    await mine.getByText('Roles: Billing', { exact: true }).waitFor();
    const members = await api.get(`/v1/${tenant.slug}/organizations/${organizationId}/members`, { token: tenant.accessToken });
    expect(members.body.items.map((m: { user: { email: string }; roles: string[] }) => [m.user.email, m.roles])).toEqual([[member.email, ['Owner']], [invitee, ['Billing']]]);
    await admin.reload();
    await admin.getByRole('heading', { name: '2 members', exact: true }).waitFor();
  });

  it('invites a person who has an account into another organization: they sign in from the link and accept as themselves', async () => {
    diagnoseOnFailure('organization-invite-existing');
    const organizations = await api.get(`/v1/${tenant.slug}/organizations?search=Initech`, { token: tenant.accessToken });
    const initech = organizations.body.items[0].id as string;
    const invited = await api.post(`/v1/${tenant.slug}/invites`, { email: member.email, role: 'Member', organizationId: initech, organizationRoles: ['Billing'] }, { token: tenant.accessToken });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);

    const context = await browser.newContext({ viewport: PHONE });
    contexts.push(context);
    const person = await context.newPage();
    await person.goto(`${server.url}/app/${tenant.slug}/accept-invite?token=${encodeURIComponent(invited.body.token)}`);
    await person.getByText('Already have an account in this workspace?').waitFor();
    expect(await axeBothThemes(person, 'accept invite')).toEqual([]);
    await person.getByRole('button', { name: 'Sign in to accept' }).click();
    await person.getByLabel('Email').fill(member.email);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign in' }).click();
    // back on the invite, signed in: accept as themselves
    await person.getByRole('heading', { name: `Signed in as ${member.email}` }).waitFor();
    expect(await axeBothThemes(person, 'accept invite signed in')).toEqual([]);
    await fitsPhone(person, 'accept-invite-signed-in');
    await person.getByRole('button', { name: `Accept as ${member.email}` }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    const mine = person.getByRole('list', { name: 'Organizations you belong to' });
    await mine.getByText('Initech', { exact: true }).waitFor();
    const members = await api.get(`/v1/${tenant.slug}/organizations/${initech}/members`, { token: tenant.accessToken });
    expect(members.body.items.map((m: { user: { email: string }; roles: string[] }) => [m.user.email, m.roles])).toEqual([[member.email, ['Billing']]]);
  });

  it("shows an organization's SSO connections and sets one up for it with the organization chosen", async () => {
    diagnoseOnFailure('organization-sso');
    const organizationId = new URL(admin.url()).pathname.split('/').at(-1)!;
    const section = admin.getByRole('region', { name: 'Enterprise SSO' });
    await section.getByText(/^No SSO connection signs people into this organization yet\./).waitFor();
    await section.getByRole('link', { name: 'Set up SSO for this organization' }).click();
    await admin.getByRole('heading', { name: 'New SSO connection', level: 1 }).waitFor();
    await expect.poll(() => admin.getByLabel('Organization to join', { exact: true }).inputValue()).toBe(organizationId);

    const idp = forgingIdp();
    const created = await api.post(`/v1/${tenant.slug}/sso-connections`, {
      name: 'Globex Okta', protocol: 'saml', domains: [`globex-${Date.now().toString(36)}.example`], organizationId,
      saml: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem },
    }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await admin.goBack();
    await admin.getByRole('heading', { name: 'Globex', level: 1 }).waitFor();
    const connections = admin.getByRole('list', { name: 'SSO connections of this organization' });
    await connections.getByRole('link', { name: 'Globex Okta' }).click();
    await admin.getByRole('heading', { name: 'Globex Okta', level: 1 }).waitFor();
    expect(new URL(admin.url()).pathname).toBe(`/app/${tenant.slug}/admin/sso/${created.body.connection.id}`);
  });

  it('deletes a user from their page and restores them from the users list; the sessions the deletion ended stay ended', async () => {
    diagnoseOnFailure('restore-user');
    const person = await signupMember(api, tenant.slug);
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/users/${person.id}`);
    await admin.getByRole('heading', { name: person.email, level: 1 }).waitFor();
    await admin.getByRole('button', { name: `Delete ${person.email}` }).click();
    await answerConfirmation(admin, 'Delete user');
    await admin.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    const deleted = admin.getByRole('region', { name: 'Deleted user' });
    await deleted.getByText(`You can restore ${person.email} for a while`, { exact: false }).waitFor();
    expect(await axeBothThemes(admin, 'users with a deleted user')).toEqual([]);
    expect((await api.get(`/v1/${tenant.slug}/users/${person.id}`, { token: tenant.accessToken })).status).toBe(404);

    await deleted.getByRole('button', { name: `Restore ${person.email}` }).click();
    await admin.getByText(`${person.email} was restored. They sign in again: their sessions stayed ended.`).waitFor();
    expect(await deleted.count()).toBe(0);
    const restored = await api.get(`/v1/${tenant.slug}/users/${person.id}`, { token: tenant.accessToken });
    expect(restored.status).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: person.accessToken })).status).toBe(401);
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: person.email, password: PASSWORD })).status).toBe(200);
  });

  it("edits a user's custom data as JSON on their page: refused before sending when it is not a JSON object, saved otherwise", async () => {
    diagnoseOnFailure('custom-data');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/users/${member.id}`);
    await admin.getByRole('heading', { name: member.email, level: 1 }).waitFor();
    const section = admin.getByRole('region', { name: 'Custom data' });
    const editor = section.getByLabel('Custom data (JSON)');
    expect(await editor.inputValue()).toBe('{}');
    await editor.fill('{"plan": pro}');
    await section.getByRole('button', { name: 'Save custom data' }).click();
    await section.getByRole('alert').getByText('This is not valid JSON.', { exact: false }).waitFor();
    await editor.fill('["pro"]');
    await section.getByRole('button', { name: 'Save custom data' }).click();
    await section.getByRole('alert').getByText('Custom data must be a JSON object', { exact: false }).waitFor();
    await editor.fill('{"plan": "pro", "seats": 5}');
    await section.getByRole('button', { name: 'Save custom data' }).click();
    await section.getByText('The custom data was saved.').waitFor();
    const stored = await api.get(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken });
    expect(stored.body.user.customData).toEqual({ plan: 'pro', seats: 5 });
    expect(await axeBothThemes(admin, 'user custom data')).toEqual([]);
  });
});
