import type { Translation } from '../../../../src/lib/locales.js';
import type { common as english } from '../en/common.js';

/** German: see ../en/common.ts. */
export const common: Translation<typeof english> = {
  skipToContent: 'Zum Inhalt springen',
  confirm: { title: 'Bitte bestätigen', cancel: 'Abbrechen' },
  notFound: { title: 'Seite nicht gefunden', home: 'Startseite', workspaceTitle: 'Kein Arbeitsbereich', workspace: 'Unter /app/{{slug}} gibt es keinen Arbeitsbereich. Prüfen Sie den Link oder öffnen Sie einen anderen Arbeitsbereich.', openAnother: 'Arbeitsbereich öffnen' },
  footer: {
    theme: 'Darstellung',
    themes: { system: 'System', light: 'Hell', dark: 'Dunkel' },
    language: 'Sprache',
    support: 'Hilfe und Support',
  },
  errors: {
    network: 'Etwas ist schiefgelaufen. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
    rateLimitedWait: 'Zu viele Versuche. Versuchen Sie es in {{wait}} erneut.',
    passkeyWrongHost: 'Passkeys für diesen Arbeitsbereich funktionieren nur auf {{rpId}}, diese Seite ist aber unter {{host}} geöffnet. Öffnen Sie {{url}} und versuchen Sie es erneut.',
    passkeyPrompt: 'Der Passkey wurde nicht verwendet: Die Abfrage wurde abgebrochen, ist abgelaufen, oder dieses Gerät hat keinen Passkey für diese Website.',
    downloadFailed: 'Der Download ist fehlgeschlagen ({{status}}).',
  },
  issues: {
    required: 'Dieses Feld ist erforderlich.',
    minLength_one: 'Verwenden Sie mindestens {{count}} Zeichen.',
    minLength_other: 'Verwenden Sie mindestens {{count}} Zeichen.',
    maxLength_one: 'Verwenden Sie höchstens {{count}} Zeichen.',
    maxLength_other: 'Verwenden Sie höchstens {{count}} Zeichen.',
    minNumber: 'Verwenden Sie {{min}} oder mehr.',
    maxNumber: 'Verwenden Sie {{max}} oder weniger.',
    email: 'Geben Sie eine E-Mail-Adresse wie name@example.com ein.',
    option: 'Wählen Sie eine der Optionen.',
    url: 'Geben Sie eine vollständige URL ein, beginnend mit https://.',
    controlCharacters: 'Entfernen Sie Zeilenumbrüche, Tabulatoren und andere Steuerzeichen.',
    dateTime: 'Geben Sie Datum und Uhrzeit ein.',
  },
  sessionMethods: { password: 'Passwort', totp: 'Authenticator-App', recovery_code: 'Wiederherstellungscode', email_otp: 'Code per E-Mail', idp: 'Identitätsanbieter', sso: 'Enterprise-SSO', passkey: 'Passkey' },
  ui: {
    scanQr: 'Scannen Sie den QR-Code mit Ihrer Authenticator-App oder geben Sie das Geheimnis ein, und geben Sie dann den 6-stelligen Code ein, den sie anzeigt.',
    qrAlt: 'QR-Code des Authenticator-Geheimnisses',
    secret: 'Geheimnis',
    recoveryCodes: 'Wiederherstellungscodes',
    recoveryCodesFile: 'Wiederherstellungscodes für den Arbeitsbereich {{workspace}}. Jeder meldet Sie einmal an.',
    saveCodes: 'Bewahren Sie diese Wiederherstellungscodes sicher auf. Jeder meldet Sie einmal an, falls Sie Ihre Authenticator-App verlieren. Sie werden nur jetzt angezeigt.',
    copyCodes: 'Codes kopieren',
    downloadCodes: 'Als .txt herunterladen',
    copied: 'Wiederherstellungscodes kopiert.',
    copyFailed: 'Der Browser hat das Kopieren nicht erlaubt. Markieren Sie die Codes oder laden Sie sie stattdessen herunter.',
    loading: 'Wird geladen…',
  },
};
