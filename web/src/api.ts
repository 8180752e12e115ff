import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../src/routers/index.js';
import { currentLocale, i18n } from './i18n';
import { issueInWords, reasonMessage, waitInWords } from './messages';

/** Inputs and outputs of every procedure, inferred from the server's router. */
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type Session = RouterOutputs['auth']['login'];

/** Access tokens in memory only, one per workspace; gone on reload (the refresh cookie restores them). */
const accessTokens = new Map<string, { token: string; expiresAtMs: number }>();

/** Keeps the access token of a new session (its refresh token, if any, is in the HttpOnly cookie). */
export function rememberSession(tenantSlug: string, session: Pick<Session, 'accessToken' | 'accessTokenExpiresIn'>): void {
  accessTokens.set(tenantSlug, { token: session.accessToken, expiresAtMs: Date.now() + session.accessTokenExpiresIn * 1000 });
}

/** The workspace's access token held in memory, if any (call restoreSession first). */
export function currentAccessToken(tenantSlug: string): string | undefined {
  return accessTokens.get(tenantSlug)?.token;
}

/** Drops the workspace's access token (sign-out). */
export function forgetSession(tenantSlug: string): void {
  accessTokens.delete(tenantSlug);
}

function slugOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const slug = (input as { tenantSlug?: unknown }).tenantSlug;
  return typeof slug === 'string' ? slug : undefined;
}

/** The deployment's workspace-creation token, when the operator set one and the person typed it. */
let tenantCreationToken: string | undefined;

/** Sends `token` with the next workspace creations (`TENANT_CREATION_TOKEN`, docs/web.md). */
export function setTenantCreationToken(token: string | undefined): void {
  tenantCreationToken = token || undefined;
}

/** Refreshes a little before expiry so that a page never sends an expired token. */
const REFRESH_MARGIN_MS = 30_000;
const refreshing = new Map<string, Promise<boolean>>();

/**
 * The typed client of the `/trpc` endpoint. Every call asks for the cookie transport of the refresh
 * token and carries the workspace's access token, refreshed from the cookie when about to expire.
 */
export const trpc = createTRPCClient<AppRouter>({
  links: [
    httpLink({
      url: '/trpc',
      headers: async ({ op }) => {
        // The page language, so mails the call sends speak it (docs/web.md "Languages").
        const headers: Record<string, string> = { 'x-refresh-transport': 'cookie', 'accept-language': currentLocale() };
        if (op.path === 'tenants.create' && tenantCreationToken) headers.authorization = `Bearer ${tenantCreationToken}`;
        const slug = slugOf(op.input);
        // One Idempotency-Key per logical refresh: its retry gets the same pair (docs/api-rules.md).
        if (typeof op.context.idempotencyKey === 'string') headers['idempotency-key'] = op.context.idempotencyKey;
        if (slug && op.path !== 'browser.refresh') {
          const held = accessTokens.get(slug);
          if (held && held.expiresAtMs - Date.now() < REFRESH_MARGIN_MS) await restoreSession(slug);
          const current = accessTokens.get(slug);
          if (current) headers.authorization = `Bearer ${current.token}`;
        }
        return headers;
      },
    }),
  ],
});

/**
 * Makes sure the workspace has an access token: rotates the refresh cookie when there is none (or
 * it is about to expire). Concurrent callers share one refresh.
 * @returns true when signed in.
 */
export async function restoreSession(tenantSlug: string): Promise<boolean> {
  const held = accessTokens.get(tenantSlug);
  if (held && held.expiresAtMs - Date.now() >= REFRESH_MARGIN_MS) return true;
  let pending = refreshing.get(tenantSlug);
  if (!pending) {
    // getRandomValues, unlike randomUUID, also exists on pages not served over HTTPS.
    const context = { idempotencyKey: Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('') };
    // A lost answer (network error or 503) is retried once with the same key, so it does not end the session.
    pending = trpc.browser.refresh
      .mutate({ tenantSlug }, { context })
      .catch((err: unknown) => {
        const status = (err as { data?: { httpStatus?: number } } | undefined)?.data?.httpStatus;
        if (status !== undefined && status !== 503) throw err;
        return new Promise((resolve) => setTimeout(resolve, 1000)).then(() => trpc.browser.refresh.mutate({ tenantSlug }, { context }));
      })
      .then((session) => {
        rememberSession(tenantSlug, session);
        return true;
      })
      .catch(() => {
        forgetSession(tenantSlug);
        return false;
      })
      .finally(() => refreshing.delete(tenantSlug));
    refreshing.set(tenantSlug, pending);
  }
  return pending;
}

/** An error as a form shows it: one message for the alert region and messages per field. */
export interface FormError {
  message: string;
  reason?: string;
  details: Record<string, unknown>;
  fields: Record<string, string>;
}

/** Reads the service's error envelope (`{code, message, details}`) from a failed call. */
export function toFormError(err: unknown): FormError {
  if (err instanceof TRPCClientError) {
    const data = (err as TRPCClientError<AppRouter>).data;
    const details = (data?.details ?? {}) as Record<string, unknown>;
    const fields: Record<string, string> = {};
    const issues = details.issues;
    if (Array.isArray(issues)) {
      for (const issue of issues as { path: string; message: string }[]) {
        const key = issue.path.split('.').pop() ?? issue.path;
        fields[key] ??= issueInWords(issue.message);
      }
    }
    const reason = typeof details.reason === 'string' ? details.reason : undefined;
    const message = messageFor(reason, details, err.message);
    // the workspace's password policy refused the password being set: say so beside that field
    if (reason === 'password_too_short' || reason === 'password_too_common') {
      fields.password = message;
      fields.newPassword = message;
    }
    return { message, reason, details, fields };
  }
  if (err instanceof RestError) return { message: messageFor(err.reason, err.details, err.message), reason: err.reason, details: err.details, fields: {} };
  return { message: i18n.t('errors.network'), details: {}, fields: {} };
}

/**
 * The sentence a page shows for an API error, in the page language: the reason's sentence
 * ({@link reasonMessage}), a 429 with its wait in words, else the service's own message.
 */
/** A refusal the service reported by its reason alone (e.g. in a page's fragment), in the page's words. */
export function reasonAsFormError(reason: string): FormError {
  return { message: messageFor(reason, {}, reason), reason, details: { reason }, fields: {} };
}

function messageFor(reason: string | undefined, details: Record<string, unknown>, fallback: string): string {
  if (reason === 'rate_limited' && typeof details.retryAfterSeconds === 'number') {
    return i18n.t('errors.rateLimitedWait', { wait: waitInWords(details.retryAfterSeconds) });
  }
  return (reason && reasonMessage(reason, details)) ?? fallback;
}

/**
 * A passkey prompt that failed in the browser, with the relying-party id (the host name passkeys are
 * bound to) of the ceremony, so the page can say where passkeys work.
 */
export class PasskeyPromptError extends Error {
  constructor(
    readonly cause: unknown,
    readonly rpId: string | undefined,
  ) {
    super('passkey prompt failed');
  }
}

/**
 * A failed passkey ceremony as a form error: API errors as {@link toFormError}; a page opened on
 * another host than the one passkeys are bound to says which address to open (the browser refuses
 * the prompt there); anything else comes from the prompt (cancelled, timed out, no passkey here).
 */
export function toPasskeyError(err: unknown): FormError {
  if (err instanceof TRPCClientError) return toFormError(err);
  if (err instanceof PasskeyPromptError) {
    const code = (err.cause as { code?: unknown } | null)?.code;
    if ((code === 'ERROR_INVALID_DOMAIN' || code === 'ERROR_INVALID_RP_ID') && err.rpId) {
      return {
        message: i18n.t('errors.passkeyWrongHost', {
          rpId: err.rpId,
          host: window.location.hostname,
          url: `${window.location.protocol}//${err.rpId}${window.location.port ? `:${window.location.port}` : ''}${window.location.pathname}`,
        }),
        details: {},
        fields: {},
      };
    }
  }
  return { message: i18n.t('errors.passkeyPrompt'), details: {}, fields: {} };
}

/** A REST call the service refused (a download, an upload): its status and the error envelope's reason, details and message. */
export class RestError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string | undefined,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * A REST call (`/v1/…`) with the workspace's access token (refreshed from the cookie first when about
 * to expire), for the routes the tRPC client cannot make: files sent or received as they are.
 * @throws RestError with the error envelope's message and reason when the answer is not 2xx.
 */
export async function restFetch(tenantSlug: string, path: string, init: RequestInit = {}): Promise<Response> {
  const held = accessTokens.get(tenantSlug);
  if (!held || held.expiresAtMs - Date.now() < REFRESH_MARGIN_MS) await restoreSession(tenantSlug);
  const token = accessTokens.get(tenantSlug)?.token;
  const headers = new Headers(init.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  headers.set('accept-language', currentLocale());
  const res = await fetch(path, { ...init, headers });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { message?: string; details?: Record<string, unknown> } | null;
    const details = body?.details && typeof body.details === 'object' ? body.details : {};
    const reason = typeof details.reason === 'string' ? details.reason : undefined;
    throw new RestError(body?.message ?? i18n.t('errors.downloadFailed', { status: res.status }), res.status, reason, details);
  }
  return res;
}

/**
 * Downloads a REST answer that is a file (the audit export, the users' export, an import's failure
 * report) with the workspace's access token and hands it to the browser as a download named by the
 * server's `Content-Disposition`.
 * @throws RestError with the error envelope's message when the answer is not 200.
 */
export async function downloadFile(tenantSlug: string, path: string): Promise<void> {
  const res = await restFetch(tenantSlug, path);
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'download';
  const url = URL.createObjectURL(await res.blob());
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = name;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
