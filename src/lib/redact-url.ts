/**
 * A connection URL safe to log: its password replaced by `***`.
 * @param what name of the variable, used when the URL cannot be parsed (e.g. `DATABASE_URL`).
 */
export function redactUrl(url: string, what: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return `<unparseable ${what}>`;
  }
}
