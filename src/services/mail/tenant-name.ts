/** Longest tenant name shown in a mail, in characters; longer names are cut with an ellipsis. */
export const MAIL_TENANT_NAME_MAX_CHARS = 80;

/**
 * A tenant name as mail may show it (docs/security.md "Mail"): anyone can create a tenant and name
 * it, so the name is attacker-chosen text. It is shown quoted, on one line, cut to
 * {@link MAIL_TENANT_NAME_MAX_CHARS}, and defanged so no mail client turns it into a link: `://`
 * becomes `[:]//` and a dot between two word characters becomes `[.]` (`evil.example` →
 * `evil[.]example`). The result is plain text: HTML bodies still escape it.
 * @example quotedTenantName('Security alert: verify at https://evil.example') ===
 *   '"Security alert: verify at https[:]//evil[.]example"'
 */
export function quotedTenantName(name: string): string {
  const oneLine = name.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ').replace(/\s+/g, ' ').trim();
  const chars = [...oneLine];
  const short = chars.length > MAIL_TENANT_NAME_MAX_CHARS ? `${chars.slice(0, MAIL_TENANT_NAME_MAX_CHARS - 1).join('')}…` : oneLine;
  const defanged = short
    .replace(/:\/\//g, '[:]//')
    .replace(/(?<=[\p{L}\p{N}_-])\.(?=[\p{L}\p{N}_-])/gu, '[.]')
    .replace(/"/g, "'");
  return `"${defanged}"`;
}
