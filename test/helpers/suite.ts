import { afterAll, beforeAll } from 'vitest';
import { Api } from './api.js';
import { freePort } from './oidc-provider.js';
import { startTestServer, type TestServer } from './server.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';

/** The service a test file shares, filled in by `beforeAll`. */
export interface SuiteServer {
  server: TestServer;
  api: Api;
  /** Set when started with `{ smtp: true }`; the server's `SMTP_URL` points at it. */
  sink: SmtpSink;
}

/**
 * Starts one service instance for the calling test file (and an SMTP sink when `smtp`), stopped
 * after the file's tests. Read the fields inside tests, not at module load.
 */
export function useTestServer(options: { smtp?: boolean; env?: Record<string, string> } = {}): SuiteServer {
  const suite = {} as SuiteServer;
  beforeAll(async () => {
    const env = { ...options.env };
    if (options.smtp) {
      suite.sink = await startSmtpSink();
      env.SMTP_URL = suite.sink.url;
    }
    suite.server = await startTestServer(env);
    suite.api = new Api(suite.server.url);
  });
  afterAll(async () => {
    await suite.server?.close();
    await suite.sink?.close();
  });
  return suite;
}

/** The service of {@link useTestServerAtPublicUrl}, with the address clients see. */
export interface PublicUrlSuite {
  server: TestServer;
  api: Api;
  /** `http://127.0.0.1:{port}`: the service's `PUBLIC_URL`, so issuer and endpoint URLs are the ones clients call. */
  publicUrl: string;
}

/**
 * Starts one service for the calling test file on a free port with `PUBLIC_URL` at that port (the
 * OpenID provider's issuer, SAML SP values and mailed links then name the address tests call),
 * stopped after the file's tests. Read the fields inside tests, not at module load.
 */
export function useTestServerAtPublicUrl(env: Record<string, string> = {}): PublicUrlSuite {
  const suite = {} as PublicUrlSuite;
  beforeAll(async () => {
    const port = await freePort();
    suite.publicUrl = `http://127.0.0.1:${port}`;
    suite.server = await startTestServer({ PORT: String(port), PUBLIC_URL: suite.publicUrl, ...env });
    suite.api = new Api(suite.server.url);
  });
  afterAll(async () => {
    await suite.server?.close();
  });
  return suite;
}
