/**
 * A real SAML 2.0 identity provider for tests: SimpleSAMLphp (Debian package `simplesamlphp`, 1.19)
 * served by `php -S` on 127.0.0.1, with a private configuration directory, a fresh self-signed
 * signing key and `exampleauth:UserPass` users. The service provider under test talks to software
 * nobody here wrote; this file only writes configuration and drives the IdP's HTML login with fetch.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const SIMPLESAMLPHP_DIR = '/usr/share/simplesamlphp';
const PHP = '/usr/bin/php';
const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const BINDING_POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';

const execFileAsync = promisify(execFile);

export interface SimpleSamlSp {
  /** The SP's entity id (the `issuer` of its AuthnRequests, the `Audience` of the assertions). */
  entityId: string;
  /** Its AssertionConsumerService, HTTP-POST binding. */
  acsUrl: string;
  /** Its certificate (PEM), needed by `signedRequests` and `encryptAssertions`. */
  certificatePem?: string;
  /** The IdP refuses an AuthnRequest without a valid signature of this SP (`validate.authnrequest`). */
  signedRequests?: boolean;
  /** The IdP encrypts its assertions to this SP's certificate (`assertion.encryption`). */
  encryptAssertions?: boolean;
}

export interface SimpleSamlUser {
  /** Without `:` (exampleauth:UserPass keys its users by `username:password`). */
  username: string;
  password: string;
  /** The NameID (format emailAddress) and the `email` attribute. */
  email: string;
  /** The `name` attribute, the username when absent. */
  name?: string;
}

export interface SimpleSamlIdp {
  /** `http://127.0.0.1:<port>/`, with the trailing slash. */
  baseUrl: string;
  /** The hosted IdP's entity id (its metadata URL). */
  entityId: string;
  /** SingleSignOnService, HTTP-Redirect binding. */
  ssoUrl: string;
  /** The IdP's signing certificate, PEM. */
  certificatePem: string;
  /** The IdP's own metadata document, as served by SimpleSAMLphp. */
  metadataXml: string;
  /** Stops php and removes the temporary directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** Whether the SimpleSAMLphp package and the PHP CLI are installed (the tests that need them skip otherwise). */
export function hasSimpleSamlPhp(): boolean {
  return existsSync(path.join(SIMPLESAMLPHP_DIR, 'www', '_include.php')) && existsSync(PHP);
}

/**
 * Starts SimpleSAMLphp as a SAML 2.0 IdP on a free port of 127.0.0.1 that knows `options.sp` as
 * remote SPs and `options.users` as username/password accounts. It signs responses and assertions
 * (RSA-SHA256) with a key made for this run, and sends the user's email as the NameID (format
 * emailAddress) plus the attributes `uid`, `email` and `name`. Resolves once the IdP serves its
 * metadata; call `stop()` (in `afterAll`) to end php and delete the configuration.
 */
export async function startSimpleSamlIdp(options: { sp: SimpleSamlSp[]; users: SimpleSamlUser[] }): Promise<SimpleSamlIdp> {
  await requirePhpExtensions();
  // The port is chosen before php binds it (the entity id and URLs in the configuration name it),
  // so another process may take it in between: then php exits at once and a new port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= 3) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startOnce(options: { sp: SimpleSamlSp[]; users: SimpleSamlUser[] }): Promise<SimpleSamlIdp> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'simplesamlphp-'));
  let child: ChildProcess | undefined;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child) await stopProcess(child);
    await rm(root, { recursive: true, force: true });
  };

  try {
    const dirs = {
      config: path.join(root, 'config'),
      metadata: path.join(root, 'metadata'),
      cert: path.join(root, 'cert'),
      sessions: path.join(root, 'sessions'),
      data: path.join(root, 'data'),
      tmp: path.join(root, 'tmp'),
      log: path.join(root, 'log'),
    };
    for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true });

    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}/`;
    const entityId = `${baseUrl}saml2/idp/metadata.php`;
    const keyFile = path.join(dirs.cert, 'idp.key');
    const certFile = path.join(dirs.cert, 'idp.crt');
    await execFileAsync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '2',
      '-subj', '/CN=SimpleSAMLphp test IdP', '-keyout', keyFile, '-out', certFile,
    ]);
    const certificatePem = await readFile(certFile, 'utf8');

    const config = {
      baseurlpath: baseUrl,
      certdir: dirs.cert,
      loggingdir: dirs.log,
      datadir: dirs.data,
      tempdir: dirs.tmp,
      metadatadir: dirs.metadata,
      'metadata.sources': [{ type: 'flatfile', directory: dirs.metadata }],
      secretsalt: randomToken(),
      'auth.adminpassword': randomToken(),
      'admin.protectindexpage': false,
      'admin.protectmetadata': false,
      'admin.checkforupdates': false,
      'trusted.url.domains': ['127.0.0.1', `127.0.0.1:${port}`],
      technicalcontact_name: 'Test',
      technicalcontact_email: 'test@example.test',
      timezone: 'UTC',
      debug: { saml: false, backtraces: true, validatexml: false },
      showerrors: true,
      errorreporting: false,
      'logging.level': 7, // SimpleSAML\Logger::DEBUG
      'logging.handler': 'file',
      'logging.logfile': 'simplesamlphp.log',
      'statistics.out': [],
      'enable.saml20-idp': true,
      'enable.shib13-idp': false,
      'enable.adfs-idp': false,
      'module.enable': { exampleauth: true, core: true, saml: true, admin: true },
      'store.type': 'phpsession',
      'session.phpsession.savepath': dirs.sessions,
      'session.phpsession.cookiename': 'SimpleSAML',
      'session.phpsession.httponly': true,
      'session.cookie.secure': false,
      'session.cookie.samesite': null,
      'session.cookie.path': '/',
      'language.cookie.secure': false,
      'language.cookie.samesite': null,
      'language.available': ['en'],
      'language.default': 'en',
      'theme.use': 'default',
      'template.cache': false,
      production: true,
      'authproc.idp': {},
      'authproc.sp': {},
    };
    const authsources = {
      admin: ['core:AdminPassword'],
      users: {
        0: 'exampleauth:UserPass',
        ...Object.fromEntries(
          options.users.map((user) => [
            `${user.username}:${user.password}`,
            { uid: [user.username], email: [user.email], name: [user.name ?? user.username] },
          ]),
        ),
      },
    };
    const idpHosted = {
      [entityId]: {
        host: '__DEFAULT__',
        privatekey: keyFile,
        certificate: certFile,
        auth: 'users',
        NameIDFormat: NAMEID_EMAIL,
        'simplesaml.nameidattribute': 'email',
        'saml20.sign.response': true,
        'saml20.sign.assertion': true,
        'signature.algorithm': 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
        'attributes.NameFormat': 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
      },
    };
    const spRemote = Object.fromEntries(
      options.sp.map((sp) => [
        sp.entityId,
        {
          AssertionConsumerService: [{ index: 0, Binding: BINDING_POST, Location: sp.acsUrl }],
          NameIDFormat: NAMEID_EMAIL,
          'simplesaml.nameidattribute': 'email',
          ...(sp.certificatePem ? { certData: sp.certificatePem.replace(/-----[^-]+-----|\s/g, '') } : {}),
          ...(sp.signedRequests ? { 'validate.authnrequest': true } : {}),
          ...(sp.encryptAssertions ? { 'assertion.encryption': true } : {}),
        },
      ]),
    );
    await writeFile(path.join(dirs.config, 'config.php'), phpAssign('config', config));
    await writeFile(path.join(dirs.config, 'authsources.php'), phpAssign('config', authsources));
    await writeFile(path.join(dirs.metadata, 'saml20-idp-hosted.php'), phpAssign('metadata', idpHosted));
    await writeFile(path.join(dirs.metadata, 'saml20-sp-remote.php'), phpAssign('metadata', spRemote));

    const output: string[] = [];
    child = spawn(PHP, ['-S', `127.0.0.1:${port}`, '-t', path.join(SIMPLESAMLPHP_DIR, 'www')], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SIMPLESAMLPHP_CONFIG_DIR: dirs.config, TMPDIR: dirs.tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer): void => {
      output.push(chunk.toString());
      if (output.length > 200) output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);

    const metadataXml = await waitForMetadata(entityId, child, output, path.join(dirs.log, 'simplesamlphp.log'));
    return { baseUrl, entityId, ssoUrl: `${baseUrl}saml2/idp/SSOService.php`, certificatePem, metadataXml, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Signs a user in at SimpleSAMLphp the way a browser would, with fetch and a cookie jar: follows the
 * HTTP-Redirect AuthnRequest URL (as `SAML.getAuthorizeUrlAsync` of @node-saml/node-saml builds it)
 * to the username/password form, posts it, and reads the auto-submitting HTTP-POST form the IdP
 * answers with. Throws with the page's text when a step does not give what it should (a wrong
 * password brings the form back, which throws too).
 */
export async function signInAtSimpleSaml(
  authnRequestUrl: string,
  username: string,
  password: string,
): Promise<{ acsUrl: string; SAMLResponse: string; RelayState?: string }> {
  const jar = new CookieJar();
  const loginPage = await jar.fetchFollowing(authnRequestUrl, { method: 'GET' });
  const loginForm = findForm(loginPage.body, (form) => 'password' in form.fields || /name="password"/.test(form.html));
  if (!loginForm) throw new Error(`SimpleSAMLphp: no login form at ${loginPage.url} (HTTP ${loginPage.status}):\n${pageText(loginPage.body)}`);

  const fields: Record<string, string> = { ...loginForm.fields, username, password };
  const action = new URL(loginForm.action || loginPage.url, loginPage.url);
  const answer = await jar.fetchFollowing(action.href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const postForm = findForm(answer.body, (form) => 'SAMLResponse' in form.fields);
  if (!postForm) throw new Error(`SimpleSAMLphp: no SAMLResponse after the login at ${answer.url} (HTTP ${answer.status}):\n${pageText(answer.body)}`);
  const SAMLResponse = postForm.fields.SAMLResponse as string;
  const RelayState = postForm.fields.RelayState;
  return { acsUrl: new URL(postForm.action, answer.url).href, SAMLResponse, ...(RelayState !== undefined ? { RelayState } : {}) };
}

/** A minimal cookie jar for one host: keeps name=value, sends them back, follows redirects by hand. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  async fetchFollowing(url: string, init: RequestInit): Promise<{ url: string; status: number; body: string }> {
    let current = url;
    let request = init;
    for (let hop = 0; hop < 10; hop++) {
      const headers = new Headers(request.headers);
      if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
      const response = await fetch(current, { ...request, headers, redirect: 'manual' });
      for (const line of response.headers.getSetCookie()) this.store(line);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        current = new URL(location, current).href;
        request = { method: 'GET' };
        continue;
      }
      return { url: current, status: response.status, body: await response.text() };
    }
    throw new Error(`SimpleSAMLphp: too many redirects from ${url}`);
  }

  private store(setCookie: string): void {
    const [pair = '', ...attributes] = setCookie.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) return;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a)) || value === 'deleted';
    if (expired) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

interface HtmlForm {
  action: string;
  html: string;
  fields: Record<string, string>;
}

/** The first form of the page that `accept` likes, with its action and its named input values. */
function findForm(html: string, accept: (form: HtmlForm) => boolean): HtmlForm | undefined {
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const attrs = match[1] ?? '';
    const inner = match[2] ?? '';
    const fields: Record<string, string> = {};
    for (const input of inner.matchAll(/<input\b([^>]*)>/gi)) {
      const a = input[1] ?? '';
      const name = attribute(a, 'name');
      const type = (attribute(a, 'type') ?? 'text').toLowerCase();
      if (!name || type === 'submit' || type === 'checkbox' || type === 'button') continue;
      fields[name] = attribute(a, 'value') ?? '';
    }
    const form = { action: attribute(attrs, 'action') ?? '', html: inner, fields };
    if (accept(form)) return form;
  }
  return undefined;
}

function attribute(attrs: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(attrs);
  if (!match) return undefined;
  return decodeEntities(match[1] ?? match[2] ?? match[3] ?? '');
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos|#039);/gi, (_, entity: string) => {
    const e = entity.toLowerCase();
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e] ?? '';
  });
}

/** The visible text of a page, for error messages. */
function pageText(html: string): string {
  return decodeEntities(
    html
      .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<[^>]+>/g, ' ')
      .replace(/[ \t]+/g, ' ')
      .replace(/\n\s*\n+/g, '\n'),
  )
    .trim()
    .slice(0, 4000);
}

/** `<?php $name = <value>;` with the value passed as JSON in a single-quoted PHP string (exact for any content). */
function phpAssign(name: string, value: unknown): string {
  const json = JSON.stringify(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  return `<?php\n$${name} = json_decode('${json}', true, 512, JSON_THROW_ON_ERROR);\n`;
}

function randomToken(): string {
  return randomBytes(24).toString('hex');
}

/** SimpleSAMLphp needs ext-dom (Debian `php-xml`), which its Debian package does not pull in. */
async function requirePhpExtensions(): Promise<void> {
  const { stdout } = await execFileAsync(PHP, ['-r', 'echo implode(",", array_filter(["dom", "openssl"], fn ($e) => !extension_loaded($e)));']);
  if (stdout.trim() !== '') {
    throw new Error(`SimpleSAMLphp: PHP lacks the extension(s) ${stdout.trim()}: apt-get install php-xml`);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForMetadata(url: string, child: ChildProcess, output: string[], logFile: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const text = output.join('');
      if (/address already in use/i.test(text)) throw new PortTakenError(text);
      throw new Error(`SimpleSAMLphp: php exited (${child.exitCode ?? child.signalCode}):\n${output.join('')}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      const body = await response.text();
      if (response.ok && body.includes('IDPSSODescriptor')) return body;
      last = `HTTP ${response.status}: ${pageText(body)}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const log = await readFile(logFile, 'utf8').catch(() => '');
  throw new Error(`SimpleSAMLphp: no metadata at ${url} within 20 s; last answer: ${last}\nphp:\n${output.join('')}\nlog:\n${log.slice(-4000)}`);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}
