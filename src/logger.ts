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

/** The service logger: JSON lines on stdout at `level`, with secrets redacted. */
export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'tenant-identity' } });
}
