import { z } from 'zod';
import { PROFILE_NAME_MAX, PROFILE_PICTURE_MAX, PROFILE_PICTURE_PATTERN } from './profile-rules.js';

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
