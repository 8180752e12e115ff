import type { EntityManager } from '@mikro-orm/postgresql';
import fc from 'fast-check';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { tokenFromMail } from '../helpers/email-verification.js';
import { freePort } from '../helpers/oidc-provider.js';
import { completeInteraction, CookieBrowser, locationOf, registerRelyingParty, signInThroughProvider, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

/**
 * Sessions end everywhere (docs/oidc.md "Sessions end everywhere", docs/security.md, ASVS 7.4.3):
 * each way of ending a person's hosted sessions also ends what they signed in to through the
 * workspace's OpenID Provider. After it, the application's refresh token answers `invalid_grant`,
 * its access token is refused at userinfo and inactive at introspection, and the next authorization
 * request in the same browser asks for a sign-in again (`prompt=none` → `login_required`).
 */

let server: TestServer;
let sink: SmtpSink;
let api: Api;
let publicUrl: string;

beforeAll(async () => {
  sink = await startSmtpSink();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  server = await startTestServer({ PORT: String(port), PUBLIC_URL: publicUrl, SMTP_URL: sink.url });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

interface Member {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

interface Situation {
  tenant: TestTenant;
  member: Member;
  /** The hosted session that completed the application sign-in. */
  signedIn: Member;
  rp: RelyingParty;
  resourceServer: RelyingParty;
  browser: CookieBrowser;
  tokens: oidc.TokenEndpointResponse;
}

async function login(slug: string, email: string, password = PASSWORD): Promise<Member & { sessionId: string }> {
  const res = await api.post(`/v1/${slug}/auth/login`, { email, password });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const sid = JSON.parse(Buffer.from(String(res.body.accessToken).split('.')[1]!, 'base64url').toString()).sid as string;
  return { id: res.body.user.id, email, accessToken: res.body.accessToken, refreshToken: res.body.refreshToken, sessionId: sid };
}

/** A member signed in twice on the hosted pages; the second session signs in to a web application. */
async function situation(): Promise<Situation & { other: Member & { sessionId: string }; appSession: Member & { sessionId: string } }> {
  const tenant = await createTenant(api);
  const member = await signupMember(api, tenant.slug);
  const other = await login(tenant.slug, member.email);
  const appSession = await login(tenant.slug, member.email);
  const rp = await registerRelyingParty(api, tenant, publicUrl, 'web');
  const resourceServer = await registerRelyingParty(api, tenant, publicUrl, 'm2m');
  const browser = new CookieBrowser();
  const result = await signInThroughProvider(rp, browser, appSession);
  const tokens = await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
  expect(tokens.refresh_token).toBeTruthy();
  return { tenant, member, signedIn: appSession, rp, resourceServer, browser, tokens, other, appSession };
}

/** Asserts that nothing of the application sign-in survives. */
async function expectApplicationSignInEnded(s: Situation): Promise<void> {
  await expect(oidc.refreshTokenGrant(s.rp.config, s.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  await expect(oidc.fetchUserInfo(s.rp.config, s.tokens.access_token, s.member.id)).rejects.toBeTruthy();
  expect((await oidc.tokenIntrospection(s.resourceServer.config, s.tokens.access_token)).active).toBe(false);
  // the same browser asks again: the provider session is gone
  const silent = oidc.buildAuthorizationUrl(s.rp.config, {
    redirect_uri: s.rp.redirectUri, scope: 'openid', prompt: 'none', state: 'st', nonce: 'nn',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
  });
  const answer = await s.browser.request(silent.href);
  const target = locationOf(answer, silent.href);
  expect(target.searchParams.get('error')).toBe('login_required');
  expect(target.searchParams.get('code')).toBeNull();
  const left = await sql<{ model: string }>(`select model from oidc_payload where tenant_id = ? and account_id = ?`, [s.tenant.id, s.member.id]);
  expect(left).toEqual([]);
}

/** Asserts that the application sign-in still works (the control of each case). */
async function expectApplicationSignInLive(s: Situation): Promise<oidc.TokenEndpointResponse> {
  const next = await oidc.refreshTokenGrant(s.rp.config, s.tokens.refresh_token!);
  expect(next.access_token).toBeTruthy();
  return next;
}

const isReset = (m: { subject: string }) => m.subject.startsWith('Reset your password');

describe('every way of ending a person\'s sessions ends their application sign-ins', () => {
  const cases: { name: string; end: (s: Awaited<ReturnType<typeof situation>>) => Promise<void> }[] = [
    {
      name: 'hosted logout of the session that signed in',
      end: async (s) => expect((await api.post(`/v1/${s.tenant.slug}/auth/logout`, { refreshToken: s.appSession.refreshToken })).status).toBe(200),
    },
    {
      name: 'logout-all',
      end: async (s) => expect((await api.post(`/v1/${s.tenant.slug}/auth/logout-all`, {}, { token: s.other.accessToken })).status).toBe(200),
    },
    {
      name: 'password change from another session',
      end: async (s) => {
        const res = await api.patch(`/v1/${s.tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword: 'another long passphrase 77' }, { token: s.other.accessToken });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      },
    },
    {
      name: 'password reset',
      end: async (s) => {
        expect((await api.post(`/v1/${s.tenant.slug}/auth/password-reset/request`, { email: s.member.email })).status).toBe(200);
        const token = tokenFromMail((await sink.waitFor(s.member.email, isReset)).text);
        const done = await api.post(`/v1/${s.tenant.slug}/auth/password-reset/complete`, { token, newPassword: 'another long passphrase 78' });
        expect(done.status, JSON.stringify(done.body)).toBe(200);
      },
    },
    {
      name: 'the owner ends that session from another one',
      end: async (s) => expect((await api.delete(`/v1/${s.tenant.slug}/me/sessions/${s.appSession.sessionId}`, { token: s.other.accessToken })).status).toBe(200),
    },
    {
      name: 'an admin ends that session',
      end: async (s) => expect((await api.delete(`/v1/${s.tenant.slug}/users/${s.member.id}/sessions/${s.appSession.sessionId}`, { token: s.tenant.accessToken })).status).toBe(200),
    },
    {
      name: 'a replayed refresh token ends that session',
      end: async (s) => {
        expect((await api.post(`/v1/${s.tenant.slug}/auth/refresh`, { refreshToken: s.appSession.refreshToken })).status).toBe(200);
        expect((await api.post(`/v1/${s.tenant.slug}/auth/refresh`, { refreshToken: s.appSession.refreshToken })).status).toBe(401);
      },
    },
    {
      name: 'suspension, and reactivation revives nothing',
      end: async (s) => {
        expect((await api.patch(`/v1/${s.tenant.slug}/users/${s.member.id}`, { status: 'Suspended' }, { token: s.tenant.accessToken })).status).toBe(200);
        expect((await api.patch(`/v1/${s.tenant.slug}/users/${s.member.id}`, { status: 'Active' }, { token: s.tenant.accessToken })).status).toBe(200);
      },
    },
    {
      name: 'deletion, and restore revives nothing',
      end: async (s) => {
        expect((await api.delete(`/v1/${s.tenant.slug}/users/${s.member.id}`, { token: s.tenant.accessToken })).status).toBe(200);
        const restored = await api.post(`/v1/${s.tenant.slug}/users/${s.member.id}/restore`, {}, { token: s.tenant.accessToken });
        expect(restored.status, JSON.stringify(restored.body)).toBe(200);
      },
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const s = await situation();
      await c.end(s);
      await expectApplicationSignInEnded(s);
    });
  }

  it('ending a session that never signed in at the provider leaves the application sign-in alone', async () => {
    const s = await situation();
    expect((await api.post(`/v1/${s.tenant.slug}/auth/logout`, { refreshToken: s.other.refreshToken })).status).toBe(200);
    await expectApplicationSignInLive(s);
  });
});

describe('the session list shows application sign-ins', () => {
  it('names the application under the session that signed in, and ending it from the list ends the application sign-in', async () => {
    const s = await situation();
    const list = await api.get(`/v1/${s.tenant.slug}/me/sessions`, { token: s.other.accessToken });
    expect(list.status).toBe(200);
    const items = list.body.items as { id: string; applications: { clientId: string; name: string | null; lastSignedInAt: string }[] }[];
    const signedIn = items.find((item) => item.id === s.appSession.sessionId)!;
    expect(signedIn.applications).toEqual([{ clientId: s.rp.clientId, name: 'App web', lastSignedInAt: expect.any(String) }]);
    expect(items.find((item) => item.id === s.other.sessionId)!.applications).toEqual([]);
    const admin = await api.get(`/v1/${s.tenant.slug}/users/${s.member.id}/sessions`, { token: s.tenant.accessToken });
    expect((admin.body.items as typeof items).find((item) => item.id === s.appSession.sessionId)!.applications).toHaveLength(1);
    expect((await api.delete(`/v1/${s.tenant.slug}/me/sessions/${s.appSession.sessionId}`, { token: s.other.accessToken })).status).toBe(200);
    await expectApplicationSignInEnded(s);
  });
});

describe('freshness', () => {
  it('honours max_age as sent (a string): an older sign-in is refused with fresh_sign_in_required', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const rp = await registerRelyingParty(api, tenant, publicUrl, 'web');
    // the hosted session proved who the member is a minute ago; the provider session takes that time
    await sql(`update session set authenticated_at = now() - interval '1 minute' where user_id = ?`, [member.id]);
    const browser = new CookieBrowser();
    await signInThroughProvider(rp, browser, member);
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: rp.redirectUri, scope: 'openid', max_age: '5', state: 's', nonce: 'n',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
    });
    const first = await browser.request(url.href);
    const interaction = locationOf(first, url.href);
    expect(interaction.pathname).toMatch(/\/oidc\/interaction\//);
    const details = await browser.request(`${interaction.href}/details`);
    expect(await details.json()).toMatchObject({ freshSignInRequired: true });
    const complete = await completeInteraction(browser, interaction.href, member);
    expect(complete.status).toBe(401);
    expect(((await complete.json()) as { details: { reason: string } }).details.reason).toBe('fresh_sign_in_required');
  });
});

describe('an access token alone never starts a provider session', () => {
  async function pendingInteraction(rp: RelyingParty, browser: CookieBrowser): Promise<string> {
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: rp.redirectUri, scope: 'openid', state: 's', nonce: 'n',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
    });
    const interaction = locationOf(await browser.request(url.href), url.href);
    expect(interaction.pathname).toMatch(/\/oidc\/interaction\//);
    return interaction.href;
  }

  it('refuses a bare access token, a rotated refresh token and another session\'s refresh token with session_proof_required', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const other = await login(tenant.slug, member.email);
    const rp = await registerRelyingParty(api, tenant, publicUrl, 'web');
    const browser = new CookieBrowser();
    const interaction = await pendingInteraction(rp, browser);

    const bare = await browser.request(`${interaction}/complete`, { method: 'POST', headers: { authorization: `Bearer ${member.accessToken}` } });
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as { details: { reason: string } }).details.reason).toBe('session_proof_required');

    const foreign = await completeInteraction(browser, interaction, { accessToken: member.accessToken, refreshToken: other.refreshToken });
    expect(((await foreign.json()) as { details: { reason: string } }).details.reason).toBe('session_proof_required');

    const rotated = await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken });
    expect(rotated.status).toBe(200);
    const stale = await completeInteraction(browser, interaction, { accessToken: rotated.body.accessToken, refreshToken: member.refreshToken });
    expect(((await stale.json()) as { details: { reason: string } }).details.reason).toBe('session_proof_required');

    const done = await completeInteraction(browser, interaction, { accessToken: rotated.body.accessToken, refreshToken: rotated.body.refreshToken });
    expect(done.status).toBe(200);
  });

  it('accepts the session-binding cookie the hosted pages\' sign-in sets, and only for that session', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const rp = await registerRelyingParty(api, tenant, publicUrl, 'web');
    const browser = new CookieBrowser();
    // the hosted page signs in through /trpc with the cookie transport
    const signedIn = await browser.request(`${server.url}/trpc/auth.login`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie' },
      body: JSON.stringify({ tenantSlug: tenant.slug, email: member.email, password: PASSWORD }),
    });
    expect(signedIn.status).toBe(200);
    const accessToken = ((await signedIn.json()) as { result: { data: { accessToken: string } } }).result.data.accessToken;
    const interaction = await pendingInteraction(rp, browser);
    // another session's access token with this browser's binding is refused
    const mismatch = await browser.request(`${interaction}/complete`, { method: 'POST', headers: { authorization: `Bearer ${member.accessToken}` } });
    expect(((await mismatch.json()) as { details: { reason: string } }).details.reason).toBe('session_proof_required');
    const done = await browser.request(`${interaction}/complete`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } });
    expect(done.status, await done.clone().text()).toBe(200);
  });
});

describe('property: no application grant outlives the hosted session that made it', () => {
  type Op =
    | { kind: 'hostedSignIn' }
    | { kind: 'appSignIn'; session: number }
    | { kind: 'appRefresh'; grant: number }
    | { kind: 'hostedLogout'; session: number }
    | { kind: 'adminEndsSession'; session: number }
    | { kind: 'logoutAll' }
    | { kind: 'passwordChange' }
    | { kind: 'suspend' }
    | { kind: 'reactivate' };

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.constant({ kind: 'hostedSignIn' as const }),
    fc.nat(3).map((session) => ({ kind: 'appSignIn' as const, session })),
    fc.nat(3).map((session) => ({ kind: 'appSignIn' as const, session })),
    fc.nat(3).map((grant) => ({ kind: 'appRefresh' as const, grant })),
    fc.nat(3).map((session) => ({ kind: 'hostedLogout' as const, session })),
    fc.nat(3).map((session) => ({ kind: 'adminEndsSession' as const, session })),
    fc.constant({ kind: 'logoutAll' as const }),
    fc.constant({ kind: 'passwordChange' as const }),
    fc.constant({ kind: 'suspend' as const }),
    fc.constant({ kind: 'reactivate' as const }),
  );

  it('holds over random sequences of sign-in, application sign-in, refresh, logout, admin ending, logout-all, password change, suspension and reactivation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 8 }), async (ops) => {
        const tenant = await createTenant(api);
        const member = await signupMember(api, tenant.slug);
        let password = PASSWORD;
        const rp = await registerRelyingParty(api, tenant, publicUrl, 'web');
        const sessions: (Member & { sessionId: string; ended: boolean })[] = [{ ...(await login(tenant.slug, member.email)), ended: false }];
        // each application sign-in: the hosted session that made it, its current refresh token, whether it must be dead
        const grants: { session: number; refreshToken: string; dead: boolean }[] = [];
        let suspended = false;
        const endAll = () => {
          for (const s of sessions) s.ended = true;
          for (const g of grants) g.dead = true;
        };
        const endOne = (index: number) => {
          const s = sessions[index]!;
          if (s.ended) return;
          s.ended = true;
          // a session that signed in to an application takes every application sign-in of the person with it
          if (grants.some((g) => g.session === index)) for (const g of grants) g.dead = true;
        };
        for (const step of ops) {
          const live = sessions.map((s, i) => ({ s, i })).filter(({ s }) => !s.ended);
          switch (step.kind) {
            case 'hostedSignIn':
              if (!suspended) sessions.push({ ...(await login(tenant.slug, member.email, password)), ended: false });
              break;
            case 'appSignIn': {
              if (suspended || live.length === 0) break;
              const { s, i } = live[step.session % live.length]!;
              const result = await signInThroughProvider(rp, new CookieBrowser(), s);
              const tokens = await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
              grants.push({ session: i, refreshToken: tokens.refresh_token!, dead: false });
              break;
            }
            case 'appRefresh': {
              const alive = grants.filter((g) => !g.dead);
              if (suspended || alive.length === 0) break;
              const g = alive[step.grant % alive.length]!;
              g.refreshToken = (await oidc.refreshTokenGrant(rp.config, g.refreshToken)).refresh_token!;
              break;
            }
            case 'hostedLogout': {
              if (live.length === 0) break;
              const { s, i } = live[step.session % live.length]!;
              expect((await api.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: s.refreshToken })).status).toBe(200);
              endOne(i);
              break;
            }
            case 'adminEndsSession': {
              if (live.length === 0) break;
              const { s, i } = live[step.session % live.length]!;
              expect((await api.delete(`/v1/${tenant.slug}/users/${member.id}/sessions/${s.sessionId}`, { token: tenant.accessToken })).status).toBe(200);
              endOne(i);
              break;
            }
            case 'logoutAll': {
              if (live.length === 0) break;
              expect((await api.post(`/v1/${tenant.slug}/auth/logout-all`, {}, { token: live[0]!.s.accessToken })).status).toBe(200);
              endAll();
              break;
            }
            case 'passwordChange': {
              if (live.length === 0) break;
              const next = `${PASSWORD} ${grants.length}${sessions.length}`;
              const keep = live[0]!;
              const res = await api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: password, newPassword: next }, { token: keep.s.accessToken });
              expect(res.status, JSON.stringify(res.body)).toBe(200);
              password = next;
              for (const [i, s] of sessions.entries()) if (i !== keep.i) s.ended = true;
              for (const g of grants) g.dead = true;
              break;
            }
            case 'suspend':
              if (suspended) break;
              expect((await api.patch(`/v1/${tenant.slug}/users/${member.id}`, { status: 'Suspended' }, { token: tenant.accessToken })).status).toBe(200);
              suspended = true;
              endAll();
              break;
            case 'reactivate':
              if (!suspended) break;
              expect((await api.patch(`/v1/${tenant.slug}/users/${member.id}`, { status: 'Active' }, { token: tenant.accessToken })).status).toBe(200);
              suspended = false;
              break;
          }
          // the invariant, after every step: a grant whose session ended (or whose person was signed out everywhere) is refused
          for (const g of grants.filter((x) => x.dead || sessions[x.session]!.ended || suspended)) {
            await expect(oidc.refreshTokenGrant(rp.config, g.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
          }
        }
      }),
      { numRuns: 6 },
    );
  });
});

