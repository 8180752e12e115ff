import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';

/** One outgoing mail, with both a plain-text and an HTML body. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * The `Message-ID` of the mail carried by queue job `jobId`: `<jobId@domain>`, the domain taken from
 * `mailFrom` (`no-reply@example.com` or `Name <no-reply@example.com>`), `localhost` when it has none.
 */
export function mailMessageId(jobId: string, mailFrom: string): string {
  const domain = /@([^\s<>@]+?)>?\s*$/.exec(mailFrom)?.[1] ?? 'localhost';
  return `<${jobId}@${domain}>`;
}

/** Milliseconds the SMTP client waits for a connection, the greeting and each socket read. */
const SMTP_TIMEOUT_MS = 10_000;

/**
 * Hands one message to nodemailer: over SMTP when `SMTP_URL` is set, otherwise as an `.eml` file in
 * `DATA_DIR/outbox` plus a log line (development). Used by the mail job of the queue only; call sites
 * use Mailer.send. Log lines name the recipient, subject and file, never the body (it may hold a code
 * or a link with a token).
 */
export class MailTransport {
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
   * @param jobId the queue job that carries the message: its `Message-ID` is `<jobId@domain of
   *   MAIL_FROM>`, the same on every run of the job, so a mail sent again after a lost outcome
   *   (at-least-once, docs/events.md "Mail") is recognisably the same message, and every log line of
   *   the delivery names the job.
   * @throws Error when SMTP delivery fails or times out (10 s per step) or the outbox file cannot be
   *   written; the message says why without the body.
   */
  async deliver(message: MailMessage, jobId: string): Promise<void> {
    try {
      const messageId = mailMessageId(jobId, this.config.mailFrom);
      const info = (await this.transport.sendMail({ from: this.config.mailFrom, ...message, messageId })) as { message?: Buffer; messageId?: string };
      if (this.outbox) {
        await mkdir(this.outbox, { recursive: true });
        const file = path.join(this.outbox, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}.eml`);
        // Written under a temporary name and renamed: a reader of the outbox never sees half a message.
        await writeFile(`${file}.tmp`, info.message ?? '', { mode: 0o600 });
        await rename(`${file}.tmp`, file);
        this.logger.info({ jobId, to: message.to, subject: message.subject, file }, 'mail written to the dev outbox');
      } else {
        this.logger.info({ jobId, to: message.to, subject: message.subject, messageId: info.messageId }, 'mail sent');
      }
    } catch (err) {
      this.logger.error({ err, jobId, to: message.to, subject: message.subject }, 'mail delivery failed');
      throw new Error(`mail delivery failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Closes pooled SMTP connections. */
  close(): void {
    this.transport.close();
  }
}
