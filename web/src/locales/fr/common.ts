import type { Translation } from '../../../../src/lib/locales.js';
import type { common as english } from '../en/common.js';

/** French: see ../en/common.ts. */
export const common: Translation<typeof english> = {
  skipToContent: 'Aller au contenu',
  confirm: { title: 'Veuillez confirmer', cancel: 'Annuler' },
  notFound: { title: 'Page introuvable', home: 'Accueil', workspaceTitle: 'Aucun espace de travail ici', workspace: 'Il n’y a pas d’espace de travail à /app/{{slug}}. Vérifiez le lien, ou ouvrez un autre espace de travail.', openAnother: 'Ouvrir un espace de travail' },
  footer: {
    theme: 'Thème',
    themes: { system: 'Système', light: 'Clair', dark: 'Sombre' },
    language: 'Langue',
    support: 'Aide et assistance',
  },
  errors: {
    network: 'Un problème est survenu. Vérifiez votre connexion et réessayez.',
    rateLimitedWait: 'Trop de tentatives. Réessayez dans {{wait}}.',
    passkeyWrongHost: 'Les clés d’accès de cet espace de travail ne fonctionnent que sur {{rpId}}, et cette page est ouverte sur {{host}}. Ouvrez {{url}} et réessayez.',
    passkeyPrompt: 'La clé d’accès n’a pas été utilisée : la demande a été annulée ou a expiré, ou cet appareil n’a pas de clé d’accès pour ce site.',
    downloadFailed: 'Le téléchargement a échoué ({{status}}).',
  },
  issues: {
    required: 'Ce champ est obligatoire.',
    minLength_one: 'Utilisez au moins {{count}} caractère.',
    minLength_other: 'Utilisez au moins {{count}} caractères.',
    maxLength_one: 'Utilisez au plus {{count}} caractère.',
    maxLength_other: 'Utilisez au plus {{count}} caractères.',
    minNumber: 'Utilisez {{min}} ou plus.',
    maxNumber: 'Utilisez {{max}} ou moins.',
    email: 'Saisissez une adresse e-mail comme nom@exemple.com.',
    option: 'Choisissez l’une des options.',
    url: 'Saisissez une URL complète, commençant par https://.',
    controlCharacters: 'Retirez les sauts de ligne, tabulations et autres caractères de contrôle.',
    dateTime: 'Saisissez une date et une heure.',
  },
  sessionMethods: { password: 'Mot de passe', totp: 'application d’authentification', recovery_code: 'code de récupération', email_otp: 'code par e-mail', idp: 'Fournisseur d’identité', sso: 'SSO entreprise', passkey: 'Clé d’accès' },
  ui: {
    scanQr: 'Scannez le code QR avec votre application d’authentification, ou saisissez le secret, puis entrez le code à 6 chiffres qu’elle affiche.',
    qrAlt: 'Code QR du secret d’authentification',
    secret: 'Secret',
    recoveryCodes: 'Codes de récupération',
    recoveryCodesFile: 'Codes de récupération pour l’espace de travail {{workspace}}. Chacun vous connecte une fois.',
    saveCodes: 'Conservez ces codes de récupération en lieu sûr. Chacun vous connecte une fois si vous perdez votre application d’authentification. Ils ne sont affichés que maintenant.',
    copyCodes: 'Copier les codes',
    downloadCodes: 'Télécharger en .txt',
    copied: 'Codes de récupération copiés.',
    copyFailed: 'Le navigateur n’a pas autorisé la copie. Sélectionnez les codes ou téléchargez-les plutôt.',
    loading: 'Chargement…',
  },
};
