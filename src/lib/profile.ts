import { z } from 'zod';

/** The longest display name of a person, in characters (docs/api-rules.md "Limits"). */
export const PROFILE_NAME_MAX = 128;
/** The longest picture URL of a person, in characters. */
export const PROFILE_PICTURE_MAX = 2048;

/**
 * A person's display name (`name` of the User object, the OpenID `name` claim): at most
 * {@link PROFILE_NAME_MAX} characters as sent, no control characters (a line break in a name would
 * break the headers and lists that show it), surrounding spaces removed, not blank. The document
 * shows the length and the patterns, which are exactly what is accepted.
 */
export const profileName = z
  .string()
  .max(PROFILE_NAME_MAX)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
  .trim()
  .min(1)
  .regex(/\S/, 'must not be blank')
  .meta({ description: `The person's display name, at most ${PROFILE_NAME_MAX} characters, no control characters; surrounding spaces are removed` });

/**
 * The `https://` URLs a picture may be: a DNS host name (labels of letters, digits and inner
 * hyphens, a top-level domain of letters: no IP address, no `localhost`, no port, no user name or
 * password), then an optional path, query and fragment of printable ASCII (anything else
 * percent-encoded, as browsers copy addresses). `http:`, `data:`, `javascript:` and every other
 * scheme do not match.
 */
export const PROFILE_PICTURE_PATTERN = /^https:\/\/(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?:[/?#][\x21-\x7e]*)?$/;

/**
 * A person's picture (`picture` of the User object, the OpenID `picture` claim): an `https://` URL
 * matching {@link PROFILE_PICTURE_PATTERN}, at most {@link PROFILE_PICTURE_MAX} characters, stored as
 * sent. The document shows the pattern and the length, which are exactly what is accepted.
 */
export const profilePicture = z
  .string()
  .max(PROFILE_PICTURE_MAX)
  .regex(PROFILE_PICTURE_PATTERN, 'Invalid URL: use an https:// address of a host name (no data:, http:, IP address, port or user name)')
  .meta({ description: `An https:// URL of the person's picture, at most ${PROFILE_PICTURE_MAX} characters (no data:, http: or other scheme, no IP address)` });

/** The profile fields one request changes: a value sets it, null clears it, absent leaves it. */
export interface ProfileChange {
  name?: string | null;
  picture?: string | null;
}
