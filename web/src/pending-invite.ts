/**
 * An invite link (`/app/{slug}/accept-invite?token=…`) opened by a person who has an account: kept in
 * this tab's sessionStorage while they sign in, so that the sign-in brings them back to accept it as
 * themselves (docs/organizations.md).
 */

const pendingInviteKey = (slug: string) => `pending-invite:${slug}`;

/** An invite link opened by a person who first signs in to accept it: kept in this tab until then. */
export function rememberPendingInvite(slug: string, token: string): void {
  sessionStorage.setItem(pendingInviteKey(slug), token);
}

/** Whether an invite waits for the person to sign in (without forgetting it). */
export function hasPendingInvite(slug: string): boolean {
  return sessionStorage.getItem(pendingInviteKey(slug)) !== null;
}

/** The invite kept by {@link rememberPendingInvite}, forgotten once read. */
export function takePendingInvite(slug: string): string | undefined {
  const token = sessionStorage.getItem(pendingInviteKey(slug)) ?? undefined;
  sessionStorage.removeItem(pendingInviteKey(slug));
  return token;
}
