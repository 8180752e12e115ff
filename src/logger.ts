import { isMainThread, workerData } from 'node:worker_threads';
import pino, { type Logger } from 'pino';

/**
 * Paths pino replaces with `[redacted]` wherever they appear in a log object: credentials, codes,
 * secrets and the `Authorization` header never reach a log line (OWASP ASVS V16).
 */
export const REDACTED_PATHS = [
  // passwords
  'password', '*.password', '*.*.password', 'currentPassword', '*.currentPassword', 'newPassword', '*.newPassword',
  // session credentials and one-time tokens
  'token', '*.token', '*.*.token', 'accessToken', '*.accessToken', '*.*.accessToken',
  'refreshToken', '*.refreshToken', '*.*.refreshToken', 'inviteToken', '*.inviteToken', 'state', '*.state',
  // API keys
  'plaintext', '*.plaintext', 'apiKey', '*.apiKey', 'key', '*.key',
  // TOTP, IdP and service secrets
  'secret', '*.secret', '*.*.secret', 'totpSecret', '*.totpSecret', 'clientSecret', '*.clientSecret', '*.*.clientSecret',
  'otpauthUri', '*.otpauthUri', 'jwtSecret', '*.jwtSecret', 'encryptionKeys', '*.encryptionKeys', '*.smtpUrl',
  // one-time codes
  'input.code', 'body.code', 'totpCode', '*.totpCode', 'emailOtpCode', '*.emailOtpCode', 'emailCode', '*.emailCode',
  // bound parameters of a failed SQL statement
  '*.params', '*.parameters',
  // HTTP credentials
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', '*.headers.authorization',
  'authorization', 'res.headers["set-cookie"]',
];

/**
 * The service logger at `level`, with secrets redacted: JSON lines on stdout, or lines for people
 * (pino-pretty: time, level, message, then the fields) when `forPeople` (stdout is a terminal).
 * @param forPeople defaults to whether stdout is a terminal; a service thread (src/heap-limit.ts) is
 *   told by its main thread, since a thread's stdout is never a terminal itself.
 */
export function createLogger(level: string, forPeople: boolean = stdoutIsTerminal()): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'tenant-identity' } };
  if (!forPeople) return pino(options);
  return pino({ ...options, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service', singleLine: false } } });
}

/** Whether this process's stdout is a terminal, as the main thread saw it (see createLogger). */
export function stdoutIsTerminal(): boolean {
  if (!isMainThread) return (workerData as { stdoutIsTerminal?: boolean } | undefined)?.stdoutIsTerminal === true;
  return process.stdout.isTTY === true;
}
