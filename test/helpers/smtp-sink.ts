import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A mail the sink received, parsed. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  /** The `Message-ID` header, with its angle brackets (empty when absent). */
  messageId: string;
  text: string;
  html: string;
}

/** A real SMTP server on 127.0.0.1 that keeps every message it is given. */
export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` for `SMTP_URL`. */
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the first mail to `to` matching `predicate` (received already or later); rejects after `timeoutMs`. */
  waitFor(to: string, predicate?: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** Starts the sink (no TLS, any or no auth accepted) on `port` (0 = any free port). */
export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(_auth, _session, cb) {
      cb(null, { user: 'test' });
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            subject: parsed.subject ?? '',
            messageId: parsed.messageId ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
          });
          waiters.splice(0).forEach((w) => w());
          cb();
        })
        .catch((err: Error) => cb(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const boundPort = (server.server.address() as AddressInfo).port;

  const waitFor = (to: string, predicate: (m: ReceivedMail) => boolean = () => true, timeoutMs = 10_000) =>
    new Promise<ReceivedMail>((resolve, reject) => {
      const started = Date.now();
      const check = () => {
        const found = messages.find((m) => m.to.includes(to.toLowerCase()) && predicate(m));
        if (found) return resolve(found);
        if (Date.now() - started > timeoutMs) return reject(new Error(`no mail to ${to} within ${timeoutMs} ms`));
        waiters.push(check);
        setTimeout(check, 100);
      };
      check();
    });

  return {
    url: `smtp://127.0.0.1:${boundPort}`,
    messages,
    waitFor,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
