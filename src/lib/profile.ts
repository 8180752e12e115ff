import { z } from 'zod';

/** The longest display name of a person, in characters (docs/api-rules.md "Limits"). */
export const PROFILE_NAME_MAX = 128;
/** The longest picture URL of a person, in characters. */
export const PROFILE_PICTURE_MAX = 2048;

/**
 * A person's display name (`name` of the User object, the OpenID `name` claim): surrounding spaces
 * removed, then 1 to {@link PROFILE_NAME_MAX} characters, not blank, no control characters
 * (a line break in a name would break the headers and lists that show it).
 */
export const profileName = z
  .string()
  .trim()
  .min(1)
  .max(PROFILE_NAME_MAX)
  .regex(/\S/, 'must not be blank')
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
  .meta({ description: `The person's display name, 1 to ${PROFILE_NAME_MAX} characters (surrounding spaces removed)` });

/**
 * A person's picture (`picture` of the User object, the OpenID `picture` claim): an absolute
 * `https://` URL of a host name (no IP address, no `localhost`, no user name or password in it),
 * at most {@link PROFILE_PICTURE_MAX} characters; `http:`, `data:`, `javascript:` and every other
 * scheme are refused. Stored as the WHATWG URL parser writes it (`URL.href`).
 */
export const profilePicture = z
  .string()
  .trim()
  .max(PROFILE_PICTURE_MAX)
  .pipe(z.url({ protocol: /^https$/, hostname: z.regexes.domain, error: 'must be an https:// URL of a host name' }))
  // a pipe's next stage runs only on what the previous one accepted: `new URL` parses here
  .pipe(z.string().refine((value) => withoutCredentials(value), 'must not contain a user name or password').transform((value) => new URL(value).href))
  .pipe(z.string().max(PROFILE_PICTURE_MAX))
  .meta({ description: `An https:// URL of the person's picture, at most ${PROFILE_PICTURE_MAX} characters (no data:, http: or other scheme)` });

/** Whether a URL that parses carries no user name and no password. */
function withoutCredentials(value: string): boolean {
  const url = URL.parse(value);
  return url !== null && url.username === '' && url.password === '';
}

/** The profile fields one request changes: a value sets it, null clears it, absent leaves it. */
export interface ProfileChange {
  name?: string | null;
  picture?: string | null;
}
