import type { Translation } from '../../../../src/lib/locales.js';
import type { admin as english } from '../en/admin.js';

/** German: see ../en/admin.ts. */
export const admin: Translation<typeof english> = {
  settings: {
    defaultLanguage: 'Standardsprache',
    defaultLanguageHint: 'Seiten und E-Mails verwenden sie für Personen, deren Browser eine Sprache verlangt, die die Seiten nicht anbieten.',
  },
  branding: {
    title: 'Erscheinungsbild',
    intro: 'Wie die Anmelde-, Konto- und E-Mail-Seiten dieses Arbeitsbereichs für seine Personen aussehen.',
    displayName: 'Anzeigename',
    displayNameHint: 'Wird auf den Seiten und in E-Mails statt des Namens des Arbeitsbereichs gezeigt. Leer lassen, um den Namen des Arbeitsbereichs zu zeigen.',
    colour: 'Schaltflächenfarbe',
    colourHex: 'Schaltflächenfarbe (Hex)',
    colourHint: 'Weißer Schaltflächentext muss lesbar bleiben: ein Kontrast von mindestens 4,5 zu 1 (WCAG AA).',
    contrastOk: 'Kontrast zu weißem Text: {{ratio}} zu 1. Gut lesbar.',
    contrastLow: 'Kontrast zu weißem Text: {{ratio}} zu 1. Zu gering: Wählen Sie eine dunklere Farbe.',
    noColour: 'Keine eigene Farbe: Die Seiten verwenden ihr Standardblau.',
    supportUrl: 'Support-Link',
    supportUrlHint: 'Ein https://- oder mailto:-Link, unten auf den Seiten und in E-Mails an Mitglieder gezeigt.',
    save: 'Erscheinungsbild speichern',
    saved: 'Erscheinungsbild gespeichert.',
    clearColour: 'Standardfarbe verwenden',
    logo: 'Logo',
    logoHint: 'PNG, JPEG, WebP oder GIF, höchstens 64 KB. Wird über den Seiten und in E-Mails gezeigt.',
    logoFile: 'Logo hochladen',
    logoUrl: 'Oder die Adresse des Logos (https)',
    fetchLogo: 'Logo abrufen',
    uploadLogo: 'Logo hochladen',
    removeLogo: 'Logo entfernen',
    logoSaved: 'Logo gespeichert.',
    logoRemoved: 'Logo entfernt.',
    noLogo: 'Noch kein Logo.',
    preview: 'Vorschau',
    previewHint: 'So sieht die Anmeldeseite mit den Werten oben aus, bevor Sie sie speichern.',
    previewSignIn: 'Anmelden',
    previewEmail: 'E-Mail',
    previewButton: 'Anmelden',
    previewSupport: 'Hilfe und Support',
  },
};
