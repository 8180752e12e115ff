// An application that signs its users in through a tenant-identity workspace (docs/oidc.md):
// authorization code + PKCE with openid-client, the ID token's claims on the home page, an API
// route that verifies the JWT access token with jose against the workspace's JWKS, refresh, and
// RP-initiated sign-out. Configuration: ISSUER, CLIENT_ID, CLIENT_SECRET, PORT (default 4000).
// Sessions are kept in memory, keyed by a random cookie: enough for an example, not for production.
import { randomBytes } from 'node:crypto';
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';

const { ISSUER, CLIENT_ID, CLIENT_SECRET } = process.env;
const PORT = Number(process.env.PORT ?? 4000);
if (!ISSUER || !CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set ISSUER (https://…/v1/<workspace>/oidc), CLIENT_ID and CLIENT_SECRET of a "web" application.');
  process.exit(1);
}
const BASE = `http://localhost:${PORT}`;
const REDIRECT_URI = `${BASE}/callback`;
/** This app's own API: the audience of the access tokens it asks for (RFC 8707 resource). */
const API = `${BASE}/api`;

const issuerUrl = new URL(ISSUER);
const config = await client.discovery(issuerUrl, CLIENT_ID, CLIENT_SECRET, undefined, {
  // plain http only for a workspace on this machine (development)
  execute: issuerUrl.protocol === 'http:' ? [client.allowInsecureRequests] : [],
});
const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri));

const sessions = new Map();
const app = express();

function session(req, res) {
  const id = /(?:^|;\s*)sid=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
  if (id && sessions.has(id)) return sessions.get(id);
  const fresh = randomBytes(24).toString('base64url');
  const value = {};
  sessions.set(fresh, value);
  res.setHeader('Set-Cookie', `sid=${fresh}; HttpOnly; SameSite=Lax; Path=/`);
  return value;
}

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title, body) => `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem"><h1>${escape(title)}</h1>${body}</body></html>`;

app.get('/', (req, res) => {
  const s = session(req, res);
  if (!s.tokens) return res.send(page('Example app', '<p>You are not signed in.</p><p><a href="/login">Sign in</a></p>'));
  const claims = s.tokens.claims();
  res.send(page('Example app', `<p>Signed in as <strong id="email">${escape(claims.email)}</strong>.</p>
<h2>ID token claims</h2><pre id="claims">${escape(JSON.stringify(claims, null, 2))}</pre>
<p><a href="/call-api">Call the API</a> · <a href="/refresh">Refresh the tokens</a> · <a href="/logout">Sign out</a></p>`));
});

app.get('/login', async (req, res) => {
  const s = session(req, res);
  s.verifier = client.randomPKCECodeVerifier();
  s.state = client.randomState();
  s.nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid email offline_access api',
    // offline_access (a refresh token) needs prompt=consent (OpenID Connect Core §11); no page is shown
    prompt: 'consent',
    resource: API,
    state: s.state,
    nonce: s.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(s.verifier),
    code_challenge_method: 'S256',
  });
  res.redirect(url.href);
});

app.get('/callback', async (req, res) => {
  const s = session(req, res);
  try {
    s.tokens = await client.authorizationCodeGrant(config, new URL(req.originalUrl, BASE), {
      pkceCodeVerifier: s.verifier,
      expectedState: s.state,
      expectedNonce: s.nonce,
    });
    res.redirect('/');
  } catch (err) {
    res.status(400).send(page('Sign-in failed', `<p>${escape(err.message)}</p>`));
  }
});

/** This app's API: accepts only a JWT access token of the workspace issued for it. */
app.get('/api/profile', async (req, res) => {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!token) return res.status(401).json({ error: 'missing token' });
  try {
    const { payload } = await jwtVerify(token, jwks, { issuer: config.serverMetadata().issuer, audience: API, typ: 'at+jwt' });
    res.json({ sub: payload.sub, scope: payload.scope, client_id: payload.client_id });
  } catch (err) {
    res.status(401).json({ error: err.code ?? 'invalid token' });
  }
});

app.get('/call-api', async (req, res) => {
  const s = session(req, res);
  if (!s.tokens) return res.redirect('/');
  const answer = await fetch(`${BASE}/api/profile`, { headers: { authorization: `Bearer ${s.tokens.access_token}` } });
  res.send(page('API answer', `<pre id="api">${escape(JSON.stringify(await answer.json(), null, 2))}</pre><p><a href="/">Back</a></p>`));
});

app.get('/refresh', async (req, res) => {
  const s = session(req, res);
  if (!s.tokens?.refresh_token) return res.redirect('/');
  const previous = s.tokens.refresh_token;
  s.tokens = await client.refreshTokenGrant(config, previous);
  res.send(page('Tokens refreshed', `<p id="refreshed">${s.tokens.refresh_token !== previous ? 'A new refresh token replaced the old one.' : 'Refreshed.'}</p><p><a href="/">Back</a></p>`));
});

app.get('/logout', (req, res) => {
  const s = session(req, res);
  const idToken = s.tokens?.id_token;
  delete s.tokens;
  if (!idToken) return res.redirect('/');
  res.redirect(client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: `${BASE}/` }).href);
});

app.listen(PORT, '127.0.0.1', () => console.log(`example app on ${BASE}`));
