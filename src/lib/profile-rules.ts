/**
 * The rules of a person's name and picture as plain values (no Zod), shared by the service's schemas
 * (./profile.ts) and the console's import page, which checks a file before it is sent.
 */

/** The longest display name of a person, in characters (docs/api-rules.md "Limits"). */
export const PROFILE_NAME_MAX = 128;
/** The longest picture URL of a person, in characters. */
export const PROFILE_PICTURE_MAX = 2048;

/** The control characters a name may not contain (a line break in a list or a header). */
// eslint-disable-next-line no-control-regex
export const PROFILE_NAME_FORBIDDEN = /[\u0000-\u001f\u007f]/;

/**
 * The `https://` URLs a picture may be: a DNS host name (labels of letters, digits and inner
 * hyphens, a top-level domain of letters: no IP address, no `localhost`, no port, no user name or
 * password), then an optional path, query and fragment of printable ASCII (anything else
 * percent-encoded, as browsers copy addresses). `http:`, `data:`, `javascript:` and every other
 * scheme do not match.
 */
export const PROFILE_PICTURE_PATTERN = /^https:\/\/(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?:[/?#][\x21-\x7e]*)?$/;

