const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * True for the textual form of a UUID (RFC 9562). Path ids of any other shape cannot name a row, so
 * routes whose id is a plain string in the OpenAPI document answer them 404 without asking the database.
 */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
