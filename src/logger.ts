import pino, { type Logger } from 'pino';

/**
 * Paths pino replaces with `[redacted]` wherever they appear in a log object: credentials, codes,
 * secrets and the `Authorization` header never reach a log line (OWASP ASVS V16).
 */
export const REDACTED_PATHS = [
  'password', '*.password', 'currentPassword', '*.currentPassword', 'newPassword', '*.newPassword',
  'token', '*.token', 'accessToken', '*.accessToken', 'refreshToken', '*.refreshToken', 'plaintext', '*.plaintext',
  'secret', '*.secret', 'clientSecret', '*.clientSecret', 'input.code', 'totpCode', '*.totpCode',
  'emailOtpCode', '*.emailOtpCode', 'otpauthUri', '*.otpauthUri',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'authorization',
  'res.headers["set-cookie"]',
];

/** The service logger: JSON lines on stdout at `level`, with secrets redacted. */
export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'tenant-identity' } });
}
