import type { Translation } from '../../../lib/locales.js';
import type { mailEn } from './en.js';

/** Every sentence of the mails, in Spanish, addressing the reader as “tú” (see en.ts). */
export const mailEs: Translation<typeof mailEn> = {
  layout: {
    footer: 'Recibes este correo por tu cuenta en {{workspace}}.',
    footerInvite: 'Recibes este correo porque un administrador de {{workspace}} invitó a {{email}}.',
    support: '¿Necesitas ayuda? Contacta con {{workspace}}: {{supportUrl}}',
    orOpen: 'Si el botón no funciona, abre este enlace:',
  },
  lifetime: { once: 'El enlace funciona una sola vez y caduca en {{lifetime}}.' },
  verification: {
    subject: 'Confirma tu dirección de correo para {{workspace}}',
    intro: 'Confirma que {{email}} es tu dirección de correo para {{workspace}}.',
    action: 'Confirmar dirección de correo',
    outro: 'Si no te registraste, puedes ignorar este correo.',
  },
  passwordReset: {
    subject: 'Restablece tu contraseña para {{workspace}}',
    intro: 'Hemos recibido una solicitud para restablecer la contraseña de {{email}} en {{workspace}}.',
    action: 'Elegir una contraseña nueva',
    outro: 'Si no lo pediste, ignora este correo: tu contraseña no cambia.',
  },
  emailChange: {
    subject: 'Confirma tu nueva dirección de correo para {{workspace}}',
    intro: 'Alguien ha pedido que {{email}} sea el correo de inicio de sesión de una cuenta en {{workspace}}.',
    action: 'Confirmar la nueva dirección',
    outro: 'Si no fuiste tú, ignora este correo: nada cambia hasta que se abra el enlace.',
  },
  emailChanged: {
    subject: 'Se cambió tu correo de inicio de sesión ({{workspace}})',
    body: 'El correo de inicio de sesión de tu cuenta en {{workspace}} se cambió de {{email}} a {{newEmail}}.',
    advice:
      'Si fuiste tú, no tienes que hacer nada: esta dirección ya no sirve para iniciar sesión. Si no fuiste tú, contacta de inmediato con un administrador del espacio de trabajo: puede restaurar tu dirección y cerrar todas las sesiones de la cuenta.',
  },
  emailOtp: {
    subject: 'Tu código de inicio de sesión para {{workspace}}',
    intro: 'Este es tu código de inicio de sesión para {{workspace}}:',
    validity: 'Funciona una sola vez y caduca en {{lifetime}}.',
    outro: 'Si no lo pediste, ignora este correo: nadie puede iniciar sesión solo con el código.',
  },
  factorChange: {
    subject: {
      totp_enrolled: 'Se añadió una app de autenticación a tu cuenta ({{workspace}})',
      totp_disabled: 'Se quitó la app de autenticación de tu cuenta ({{workspace}})',
      passkey_added: 'Se añadió una llave de acceso a tu cuenta ({{workspace}})',
      passkey_removed: 'Se quitó una llave de acceso de tu cuenta ({{workspace}})',
      recovery_codes_regenerated: 'Nuevos códigos de recuperación para tu cuenta ({{workspace}})',
      passkey_clone_suspected: 'Se rechazó un inicio de sesión con llave de acceso ({{workspace}})',
    },
    what: {
      totp_enrolled: 'Se añadió una app de autenticación como segundo paso del inicio de sesión a tu cuenta {{email}} en {{workspace}}.',
      totp_disabled: 'Se quitó la app de autenticación de tu cuenta {{email}} en {{workspace}}.',
      passkey_added: 'Se añadió a tu cuenta {{email}} en {{workspace}} una llave de acceso, que te permite iniciar sesión sin contraseña.',
      passkey_removed: 'Se quitó una llave de acceso de tu cuenta {{email}} en {{workspace}}.',
      recovery_codes_regenerated: 'Se creó un nuevo juego de códigos de recuperación para tu cuenta {{email}} en {{workspace}}; los códigos anteriores ya no funcionan.',
      passkey_clone_suspected:
        'Se rechazó un inicio de sesión en tu cuenta {{email}} en {{workspace}} con una de tus llaves de acceso: la llave parece copiada, porque su contador de firmas retrocedió.',
    },
    byAdmin: 'Un administrador del espacio de trabajo hizo este cambio.',
    advice: 'Si fuiste tú, no tienes que hacer nada. Si no, restablece tu contraseña de inmediato y pide a un administrador del espacio de trabajo que deshaga el cambio y cierre tus sesiones.',
  },
  recoveryCodeUsed: {
    subject: 'Se usó un código de recuperación para iniciar sesión ({{workspace}})',
    body: 'Se acaba de usar un código de recuperación para iniciar sesión en tu cuenta {{email}} en {{workspace}}.',
    remaining_one: 'Te queda {{count}} código de recuperación sin usar.',
    remaining_other: 'Te quedan {{count}} códigos de recuperación sin usar.',
    advice:
      'Si fuiste tú, plantéate crear un nuevo juego de códigos de recuperación en la página de tu cuenta. Si no, restablece tu contraseña de inmediato y pide a un administrador del espacio de trabajo que cierre tus sesiones.',
  },
  invite: {
    subject: 'Te han invitado a unirte a {{workspace}}',
    intro_Member: 'Te han invitado a unirte a {{workspace}} como miembro.',
    intro_Admin: 'Te han invitado a unirte a {{workspace}} como administrador.',
    notice: 'El nombre del espacio de trabajo lo eligieron sus administradores; no lo hemos comprobado.',
    action: 'Aceptar la invitación',
    outro: 'Elegirás tu contraseña al aceptar. La invitación es válida hasta el {{date}}.',
  },
  webhookDisabled: {
    subject: 'Se desactivó un webhook en {{workspace}}',
    body: 'Todas las entregas al webhook {{url}} han fallado durante mucho tiempo, así que lo hemos desactivado.',
    advice: 'Corrige el endpoint receptor y vuelve a activar el webhook en la consola.',
  },
  issuerChanged: {
    subject: 'Se cambió el proveedor de identidad ({{workspace}})',
    body: '{{changedBy}} cambió el proveedor de identidad de {{workspace}}: el inicio de sesión con el proveedor ahora confía en {{newIssuer}} en lugar de {{previousIssuer}}.',
    advice:
      'Si este cambio no estaba acordado, elimina de inmediato las credenciales del proveedor en los ajustes de la consola, cierra las sesiones abiertas a través de él y revisa el registro de auditoría.',
  },
  ssoConnectionChanged: {
    subject: 'Se cambió una conexión de inicio de sesión único ({{workspace}})',
    created: '{{changedBy}} añadió la conexión de inicio de sesión único «{{name}}» a {{workspace}}: las personas de {{domains}} ahora inician sesión en {{provider}}.',
    updated: '{{changedBy}} cambió la conexión de inicio de sesión único «{{name}}» de {{workspace}}: las personas de {{domains}} inician sesión en {{provider}}.',
    deleted: '{{changedBy}} eliminó la conexión de inicio de sesión único «{{name}}» de {{workspace}}.',
    advice: 'Quien controla una conexión decide quién inicia sesión en sus dominios. Si este cambio no estaba acordado, elimina la conexión en la consola de inmediato y revisa el registro de auditoría.',
  },
};
