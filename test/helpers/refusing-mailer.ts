import type { Mailer } from '../../src/services/mail/mailer.js';

/**
 * The instance's mailer, except that queueing a mail fails as a refused insert into the job queue
 * would: for service-level tests that a change and its mail commit together (docs/events.md "Mail").
 */
export function refusingMailer(real: Mailer): Mailer {
  return Object.create(real, {
    send: { value: async () => { throw new Error('the job queue refused the mail'); } },
  }) as Mailer;
}
