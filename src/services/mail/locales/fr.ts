import type { Translation } from '../../../lib/locales.js';
import type { mailEn } from './en.js';

/** Every sentence of the mails, in French (see en.ts). */
export const mailFr: Translation<typeof mailEn> = {
  layout: {
    footer: 'Vous recevez cet e-mail en raison de votre compte dans {{workspace}}.',
    footerInvite: 'Vous recevez cet e-mail parce qu’un admin de {{workspace}} a invité {{email}}.',
    support: 'Besoin d’aide ? Contactez {{workspace}} : {{supportUrl}}',
    orOpen: 'Si le bouton ne fonctionne pas, ouvrez ce lien :',
  },
  lifetime: { once: 'Le lien fonctionne une seule fois et expire dans {{lifetime}}.' },
  verification: {
    subject: 'Confirmez votre adresse e-mail pour {{workspace}}',
    intro: 'Merci de confirmer que {{email}} est votre adresse e-mail pour {{workspace}}.',
    action: 'Confirmer l’adresse e-mail',
    outro: 'Si vous ne vous êtes pas inscrit, vous pouvez ignorer cet e-mail.',
  },
  passwordReset: {
    subject: 'Réinitialisez votre mot de passe pour {{workspace}}',
    intro: 'Nous avons reçu une demande de réinitialisation du mot de passe de {{email}} pour {{workspace}}.',
    action: 'Choisir un nouveau mot de passe',
    outro: 'Si vous n’avez rien demandé, ignorez cet e-mail : votre mot de passe reste inchangé.',
  },
  emailChange: {
    subject: 'Confirmez votre nouvelle adresse e-mail pour {{workspace}}',
    intro: 'Quelqu’un a demandé que {{email}} devienne l’adresse de connexion d’un compte dans {{workspace}}.',
    action: 'Confirmer la nouvelle adresse',
    outro: 'Si ce n’était pas vous, ignorez cet e-mail : rien ne change tant que le lien n’est pas ouvert.',
  },
  emailChanged: {
    subject: 'Votre adresse de connexion a été modifiée ({{workspace}})',
    body: 'L’adresse de connexion de votre compte dans {{workspace}} est passée de {{email}} à {{newEmail}}.',
    advice:
      'Si c’était vous, il n’y a rien à faire : cette adresse ne permet plus de se connecter. Sinon, contactez immédiatement un admin de l’espace de travail : il peut rétablir votre adresse et fermer toutes les sessions du compte.',
  },
  emailOtp: {
    subject: 'Votre code de connexion pour {{workspace}}',
    intro: 'Voici votre code de connexion pour {{workspace}} :',
    validity: 'Il fonctionne une seule fois et expire dans {{lifetime}}.',
    outro: 'Si vous ne l’avez pas demandé, ignorez cet e-mail : personne ne peut se connecter avec le code seul.',
  },
  factorChange: {
    subject: {
      totp_enrolled: 'Application d’authentification ajoutée à votre compte ({{workspace}})',
      totp_disabled: 'Application d’authentification retirée de votre compte ({{workspace}})',
      passkey_added: 'Clé d’accès ajoutée à votre compte ({{workspace}})',
      passkey_removed: 'Clé d’accès retirée de votre compte ({{workspace}})',
      recovery_codes_regenerated: 'Nouveaux codes de récupération pour votre compte ({{workspace}})',
      passkey_clone_suspected: 'Une connexion par clé d’accès a été refusée ({{workspace}})',
    },
    what: {
      totp_enrolled: 'Une application d’authentification a été ajoutée comme deuxième étape de connexion à votre compte {{email}} dans {{workspace}}.',
      totp_disabled: 'L’application d’authentification a été retirée de votre compte {{email}} dans {{workspace}}.',
      passkey_added: 'Une clé d’accès, qui vous connecte sans mot de passe, a été ajoutée à votre compte {{email}} dans {{workspace}}.',
      passkey_removed: 'Une clé d’accès a été retirée de votre compte {{email}} dans {{workspace}}.',
      recovery_codes_regenerated: 'De nouveaux codes de récupération ont été créés pour votre compte {{email}} dans {{workspace}} ; les anciens codes ne fonctionnent plus.',
      passkey_clone_suspected:
        'Une connexion à votre compte {{email}} dans {{workspace}} avec l’une de vos clés d’accès a été refusée : la clé semble copiée, car son compteur de signature a reculé.',
    },
    byAdmin: 'Un admin de l’espace de travail a effectué ce changement.',
    advice: 'Si c’était vous, il n’y a rien à faire. Sinon, réinitialisez immédiatement votre mot de passe et demandez à un admin de l’espace de travail d’annuler le changement et de fermer vos sessions.',
  },
  recoveryCodeUsed: {
    subject: 'Un code de récupération a servi à se connecter ({{workspace}})',
    body: 'Un code de récupération vient de servir à se connecter à votre compte {{email}} dans {{workspace}}.',
    remaining_one: 'Il vous reste {{count}} code de récupération inutilisé.',
    remaining_other: 'Il vous reste {{count}} codes de récupération inutilisés.',
    advice:
      'Si c’était vous, pensez à créer de nouveaux codes de récupération sur la page de votre compte. Sinon, réinitialisez immédiatement votre mot de passe et demandez à un admin de l’espace de travail de fermer vos sessions.',
  },
  invite: {
    subject: 'Vous êtes invité à rejoindre {{workspace}}',
    intro_Member: 'Vous avez été invité à rejoindre {{workspace}} en tant que membre.',
    intro_Admin: 'Vous avez été invité à rejoindre {{workspace}} en tant qu’admin.',
    notice: 'Le nom de l’espace de travail a été choisi par ses admins ; nous ne l’avons pas vérifié.',
    action: 'Accepter l’invitation',
    outro: 'Vous choisirez votre mot de passe en acceptant. L’invitation est valable jusqu’au {{date}}.',
  },
  webhookDisabled: {
    subject: 'Un webhook a été désactivé dans {{workspace}}',
    body: 'Toutes les livraisons au webhook {{url}} échouent depuis longtemps, nous l’avons donc désactivé.',
    advice: 'Corrigez le point de réception, puis réactivez le webhook dans la console.',
  },
  issuerChanged: {
    subject: 'Le fournisseur d’identité a été modifié ({{workspace}})',
    body: '{{changedBy}} a modifié le fournisseur d’identité de {{workspace}} : la connexion par le fournisseur fait désormais confiance à {{newIssuer}} au lieu de {{previousIssuer}}.',
    advice:
      'Si ce changement n’était pas convenu, supprimez immédiatement les identifiants du fournisseur dans les paramètres de la console, fermez les sessions ouvertes par ce biais et consultez le journal d’audit.',
  },
  ssoConnectionChanged: {
    subject: 'Une connexion d’authentification unique a été modifiée ({{workspace}})',
    created: '{{changedBy}} a ajouté la connexion d’authentification unique « {{name}} » à {{workspace}} : les personnes de {{domains}} se connectent désormais chez {{provider}}.',
    updated: '{{changedBy}} a modifié la connexion d’authentification unique « {{name}} » de {{workspace}} : les personnes de {{domains}} se connectent chez {{provider}}.',
    deleted: '{{changedBy}} a supprimé la connexion d’authentification unique « {{name}} » de {{workspace}}.',
    advice: 'Qui contrôle une connexion décide qui se connecte pour ses domaines. Si cette modification n’a pas été convenue, supprimez la connexion dans la console immédiatement et examinez le journal d’audit.',
  },
};
