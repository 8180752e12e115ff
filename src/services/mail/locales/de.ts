import type { Translation } from '../../../lib/locales.js';
import type { mailEn } from './en.js';

/** Every sentence of the mails, in German (see en.ts). */
export const mailDe: Translation<typeof mailEn> = {
  layout: {
    footer: 'Sie erhalten diese E-Mail wegen Ihres Kontos bei {{workspace}}.',
    footerInvite: 'Sie erhalten diese E-Mail, weil ein Admin von {{workspace}} {{email}} eingeladen hat.',
    support: 'Brauchen Sie Hilfe? Wenden Sie sich an {{workspace}}: {{supportUrl}}',
    orOpen: 'Falls die Schaltfläche nicht funktioniert, öffnen Sie diesen Link:',
  },
  lifetime: { once: 'Der Link funktioniert einmal und läuft in {{lifetime}} ab.' },
  verification: {
    subject: 'Bestätigen Sie Ihre E-Mail-Adresse für {{workspace}}',
    intro: 'Bitte bestätigen Sie, dass {{email}} Ihre E-Mail-Adresse für {{workspace}} ist.',
    action: 'E-Mail-Adresse bestätigen',
    outro: 'Wenn Sie sich nicht registriert haben, können Sie diese E-Mail ignorieren.',
  },
  passwordReset: {
    subject: 'Setzen Sie Ihr Passwort für {{workspace}} zurück',
    intro: 'Wir haben eine Anfrage erhalten, das Passwort von {{email}} für {{workspace}} zurückzusetzen.',
    action: 'Neues Passwort wählen',
    outro: 'Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt, wie es ist.',
  },
  emailChange: {
    subject: 'Bestätigen Sie Ihre neue E-Mail-Adresse für {{workspace}}',
    intro: 'Jemand möchte {{email}} zur Anmelde-E-Mail-Adresse eines Kontos bei {{workspace}} machen.',
    action: 'Neue E-Mail-Adresse bestätigen',
    outro: 'Wenn Sie das nicht waren, ignorieren Sie diese E-Mail: Nichts ändert sich, solange der Link nicht geöffnet wird.',
  },
  emailChanged: {
    subject: 'Ihre Anmelde-E-Mail-Adresse wurde geändert ({{workspace}})',
    body: 'Die Anmelde-E-Mail-Adresse Ihres Kontos bei {{workspace}} wurde von {{email}} in {{newEmail}} geändert.',
    advice:
      'Wenn Sie das waren, ist nichts zu tun: Mit dieser Adresse kann man sich nicht mehr anmelden. Wenn nicht, wenden Sie sich sofort an einen Admin des Arbeitsbereichs: Er kann Ihre Adresse wiederherstellen und alle Sitzungen des Kontos beenden.',
  },
  emailOtp: {
    subject: 'Ihr Anmeldecode für {{workspace}}',
    intro: 'Hier ist Ihr Anmeldecode für {{workspace}}:',
    validity: 'Er funktioniert einmal und läuft in {{lifetime}} ab.',
    outro: 'Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Mit dem Code allein kann sich niemand anmelden.',
  },
  factorChange: {
    subject: {
      totp_enrolled: 'Authenticator-App zu Ihrem Konto hinzugefügt ({{workspace}})',
      totp_disabled: 'Authenticator-App aus Ihrem Konto entfernt ({{workspace}})',
      passkey_added: 'Passkey zu Ihrem Konto hinzugefügt ({{workspace}})',
      passkey_removed: 'Passkey aus Ihrem Konto entfernt ({{workspace}})',
      recovery_codes_regenerated: 'Neue Wiederherstellungscodes für Ihr Konto ({{workspace}})',
      passkey_clone_suspected: 'Eine Anmeldung mit Passkey wurde abgelehnt ({{workspace}})',
    },
    what: {
      totp_enrolled: 'Eine Authenticator-App wurde als zweiter Anmeldeschritt zu Ihrem Konto {{email}} bei {{workspace}} hinzugefügt.',
      totp_disabled: 'Die Authenticator-App wurde aus Ihrem Konto {{email}} bei {{workspace}} entfernt.',
      passkey_added: 'Ein Passkey, mit dem Sie sich ohne Passwort anmelden, wurde zu Ihrem Konto {{email}} bei {{workspace}} hinzugefügt.',
      passkey_removed: 'Ein Passkey wurde aus Ihrem Konto {{email}} bei {{workspace}} entfernt.',
      recovery_codes_regenerated: 'Für Ihr Konto {{email}} bei {{workspace}} wurden neue Wiederherstellungscodes erstellt; die bisherigen Codes funktionieren nicht mehr.',
      passkey_clone_suspected:
        'Eine Anmeldung bei Ihrem Konto {{email}} bei {{workspace}} mit einem Ihrer Passkeys wurde abgelehnt: Der Passkey scheint kopiert zu sein, denn sein Signaturzähler ist zurückgegangen.',
    },
    byAdmin: 'Ein Admin des Arbeitsbereichs hat diese Änderung vorgenommen.',
    advice: 'Wenn Sie das waren, ist nichts zu tun. Wenn nicht, setzen Sie sofort Ihr Passwort zurück und bitten Sie einen Admin des Arbeitsbereichs, die Änderung rückgängig zu machen und Ihre Sitzungen zu beenden.',
  },
  recoveryCodeUsed: {
    subject: 'Ein Wiederherstellungscode wurde zur Anmeldung verwendet ({{workspace}})',
    body: 'Soeben wurde ein Wiederherstellungscode verwendet, um sich bei Ihrem Konto {{email}} bei {{workspace}} anzumelden.',
    remaining_one: 'Sie haben noch {{count}} unbenutzten Wiederherstellungscode.',
    remaining_other: 'Sie haben noch {{count}} unbenutzte Wiederherstellungscodes.',
    advice:
      'Wenn Sie das waren, erstellen Sie am besten auf Ihrer Kontoseite neue Wiederherstellungscodes. Wenn nicht, setzen Sie sofort Ihr Passwort zurück und bitten Sie einen Admin des Arbeitsbereichs, Ihre Sitzungen zu beenden.',
  },
  invite: {
    subject: 'Sie sind zu {{workspace}} eingeladen',
    intro_Member: 'Sie wurden eingeladen, {{workspace}} als Mitglied beizutreten.',
    intro_Admin: 'Sie wurden eingeladen, {{workspace}} als Admin beizutreten.',
    notice: 'Der Name des Arbeitsbereichs wurde von seinen Admins gewählt; wir haben ihn nicht geprüft.',
    action: 'Einladung annehmen',
    outro: 'Beim Annehmen wählen Sie Ihr Passwort. Die Einladung gilt bis {{date}}.',
  },
  webhookDisabled: {
    subject: 'Ein Webhook wurde bei {{workspace}} ausgeschaltet',
    body: 'Jede Zustellung an den Webhook {{url}} ist seit langer Zeit fehlgeschlagen, daher haben wir ihn ausgeschaltet.',
    advice: 'Beheben Sie den Fehler beim Empfänger und schalten Sie den Webhook dann in der Konsole wieder ein.',
  },
  issuerChanged: {
    subject: 'Der Identitätsanbieter wurde geändert ({{workspace}})',
    body: '{{changedBy}} hat den Identitätsanbieter von {{workspace}} geändert: Die Anmeldung über den Anbieter vertraut jetzt {{newIssuer}} statt {{previousIssuer}}.',
    advice:
      'Wenn diese Änderung nicht abgesprochen war, entfernen Sie sofort die Zugangsdaten des Anbieters in den Einstellungen der Konsole, beenden Sie die darüber geöffneten Sitzungen und prüfen Sie das Audit-Protokoll.',
  },
  ssoConnectionChanged: {
    subject: 'Eine Single-Sign-on-Verbindung wurde geändert ({{workspace}})',
    created: '{{changedBy}} hat die Single-Sign-on-Verbindung „{{name}}“ zu {{workspace}} hinzugefügt: Personen von {{domains}} melden sich jetzt bei {{provider}} an.',
    updated: '{{changedBy}} hat die Single-Sign-on-Verbindung „{{name}}“ von {{workspace}} geändert: Personen von {{domains}} melden sich bei {{provider}} an.',
    deleted: '{{changedBy}} hat die Single-Sign-on-Verbindung „{{name}}“ aus {{workspace}} entfernt.',
    advice: 'Wer eine Verbindung kontrolliert, entscheidet, wer sich für ihre Domains anmeldet. Wenn diese Änderung nicht abgesprochen war, entfernen Sie die Verbindung sofort in der Konsole und prüfen Sie das Audit-Protokoll.',
  },
};
