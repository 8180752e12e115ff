import type { EntityManager } from '@mikro-orm/postgresql';
import type { TestServer } from './server.js';

/**
 * Turns a tenant's "require email verification" setting on or off directly in the database (the
 * PATCH tenant route that exposes it is built elsewhere).
 */
export async function setRequireEmailVerification(server: TestServer, slug: string, on: boolean): Promise<void> {
  const em = server.services.orm.em.fork() as EntityManager;
  await em.execute('update tenant set require_email_verification = ? where slug = ?', [on, slug]);
}

/** The token of the newest mailed link in a mail body (`…?token=…`). */
export function tokenFromMail(text: string): string {
  const matches = [...text.matchAll(/token=([A-Za-z0-9_%-]{20,})/g)];
  const last = matches.at(-1);
  if (!last) throw new Error(`no token in mail: ${text}`);
  return decodeURIComponent(last[1]!);
}
