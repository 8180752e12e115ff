import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { ApiError } from '../../lib/errors.js';

/** One outgoing mail, with both a plain-text and an HTML body. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Raised when the SMTP server refused or did not answer in time. It is an API error: a procedure
 * that lets it through answers 503 `SERVICE_UNAVAILABLE` with `details.reason` `mail_delivery_failed`
 * and a message that is safe to show (the SMTP reply itself is only logged).
 */
export class MailDeliveryError extends ApiError {
  // No `name` override: the REST adapter recognises tRPC errors by `name === 'TRPCError'`.
  constructor() {
    super('SERVICE_UNAVAILABLE', 'The email could not be sent; try again later', { reason: 'mail_delivery_failed' });
  }
}

/** Milliseconds the SMTP client waits for a connection, the greeting and each socket read. */
const SMTP_TIMEOUT_MS = 10_000;

/**
 * Sends mail through nodemailer: over SMTP when `SMTP_URL` is set, otherwise as `.eml` files in
 * `DATA_DIR/outbox` plus a log line (development). Log lines name the recipient, subject and file,
 * never the body (it may hold a code or a link with a token).
 */
export class Mailer {
  private readonly transport: Transporter;
  private readonly outbox: string | undefined;

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {
    if (config.smtpUrl) {
      const url = new URL(config.smtpUrl);
      const user = decodeURIComponent(url.username);
      this.transport = nodemailer.createTransport({
        host: url.hostname,
        port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
        secure: url.protocol === 'smtps:',
        auth: user ? { user, pass: decodeURIComponent(url.password) } : undefined,
        connectionTimeout: SMTP_TIMEOUT_MS,
        greetingTimeout: SMTP_TIMEOUT_MS,
        socketTimeout: SMTP_TIMEOUT_MS,
      });
    } else {
      this.outbox = path.join(config.dataDir, 'outbox');
      this.transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
    }
  }

  /**
   * Sends one message from `MAIL_FROM`.
   * @throws MailDeliveryError (503) when SMTP delivery fails or times out (10 s per step), or the
   *   outbox file cannot be written.
   */
  async send(message: MailMessage): Promise<void> {
    try {
      const info = (await this.transport.sendMail({ from: this.config.mailFrom, ...message })) as { message?: Buffer; messageId?: string };
      if (this.outbox) {
        await mkdir(this.outbox, { recursive: true });
        const file = path.join(this.outbox, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}.eml`);
        await writeFile(file, info.message ?? '', { mode: 0o600 });
        this.logger.info({ to: message.to, subject: message.subject, file }, 'mail written to the dev outbox');
      } else {
        this.logger.info({ to: message.to, subject: message.subject, messageId: info.messageId }, 'mail sent');
      }
    } catch (err) {
      this.logger.error({ err, to: message.to, subject: message.subject }, 'mail delivery failed');
      throw new MailDeliveryError();
    }
  }

  /** Closes pooled SMTP connections. */
  async close(): Promise<void> {
    this.transport.close();
  }
}
