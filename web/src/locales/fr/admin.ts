import type { Translation } from '../../../../src/lib/locales.js';
import type { admin as english } from '../en/admin.js';

/** French: see ../en/admin.ts. */
export const admin: Translation<typeof english> = {
  settings: {
    defaultLanguage: 'Langue par défaut',
    defaultLanguageHint: 'Les pages et les e-mails l’utilisent pour les personnes dont le navigateur demande une langue que les pages ne proposent pas.',
  },
  branding: {
    title: 'Image de marque',
    intro: 'L’apparence des pages de connexion, de compte et des e-mails de cet espace de travail pour ses membres.',
    displayName: 'Nom affiché',
    displayNameHint: 'Affiché sur les pages et dans les e-mails à la place du nom de l’espace de travail. Laissez vide pour afficher le nom de l’espace de travail.',
    colour: 'Couleur des boutons',
    colourHex: 'Couleur des boutons (hex)',
    colourHint: 'Le texte blanc des boutons doit rester lisible : un contraste d’au moins 4,5 pour 1 (WCAG AA).',
    contrastOk: 'Contraste avec un texte blanc : {{ratio}} pour 1. Lisible.',
    contrastLow: 'Contraste avec un texte blanc : {{ratio}} pour 1. Trop faible : choisissez une couleur plus foncée.',
    noColour: 'Pas de couleur propre : les pages utilisent leur bleu standard.',
    supportUrl: 'Lien d’assistance',
    supportUrlHint: 'Un lien https:// ou mailto:, affiché en bas des pages et dans les e-mails aux membres.',
    save: 'Enregistrer l’image de marque',
    saved: 'Image de marque enregistrée.',
    clearColour: 'Utiliser la couleur standard',
    logo: 'Logo',
    logoHint: 'PNG, JPEG, WebP ou GIF, 64 Ko au plus. Affiché au-dessus des pages et dans les e-mails.',
    logoFile: 'Téléverser un logo',
    logoUrl: 'Ou l’adresse du logo (https)',
    fetchLogo: 'Récupérer le logo',
    uploadLogo: 'Téléverser le logo',
    removeLogo: 'Supprimer le logo',
    logoSaved: 'Logo enregistré.',
    logoRemoved: 'Logo supprimé.',
    noLogo: 'Pas encore de logo.',
    preview: 'Aperçu',
    previewHint: 'L’apparence de la page de connexion avec les valeurs ci-dessus, avant de les enregistrer.',
    previewSignIn: 'Connexion',
    previewEmail: 'E-mail',
    previewButton: 'Se connecter',
    previewSupport: 'Aide et assistance',
  },
};
