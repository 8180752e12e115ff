import type { Translation } from '../../../../src/lib/locales.js';
import type { common as english } from '../en/common.js';

/** Spanish (addressing the reader as “tú”): see ../en/common.ts. */
export const common: Translation<typeof english> = {
  skipToContent: 'Ir al contenido',
  confirm: { title: 'Confirma, por favor', cancel: 'Cancelar' },
  notFound: { title: 'Página no encontrada', home: 'Inicio', workspaceTitle: 'Aquí no hay ningún espacio de trabajo', workspace: 'No hay ningún espacio de trabajo en /app/{{slug}}. Comprueba el enlace o abre otro espacio de trabajo.', openAnother: 'Abrir un espacio de trabajo' },
  footer: {
    theme: 'Tema',
    themes: { system: 'Sistema', light: 'Claro', dark: 'Oscuro' },
    language: 'Idioma',
    support: 'Ayuda y soporte',
  },
  errors: {
    network: 'Algo salió mal. Comprueba tu conexión e inténtalo de nuevo.',
    rateLimitedWait: 'Demasiados intentos. Vuelve a intentarlo dentro de {{wait}}.',
    passkeyWrongHost: 'Las llaves de acceso de este espacio de trabajo solo funcionan en {{rpId}}, y esta página está abierta en {{host}}. Abre {{url}} e inténtalo de nuevo.',
    passkeyPrompt: 'No se usó la llave de acceso: la solicitud se canceló o caducó, o este dispositivo no tiene ninguna llave de acceso para este sitio.',
    downloadFailed: 'La descarga falló ({{status}}).',
  },
  issues: {
    required: 'Este campo es obligatorio.',
    minLength_one: 'Usa al menos {{count}} carácter.',
    minLength_other: 'Usa al menos {{count}} caracteres.',
    maxLength_one: 'Usa como máximo {{count}} carácter.',
    maxLength_other: 'Usa como máximo {{count}} caracteres.',
    minNumber: 'Usa {{min}} o más.',
    maxNumber: 'Usa {{max}} o menos.',
    email: 'Introduce una dirección de correo como nombre@ejemplo.com.',
    option: 'Elige una de las opciones.',
    url: 'Introduce una URL completa que empiece por https://.',
    controlCharacters: 'Quita los saltos de línea, tabulaciones y otros caracteres de control.',
    dateTime: 'Introduce una fecha y una hora.',
  },
  sessionMethods: { password: 'Contraseña', totp: 'app de autenticación', recovery_code: 'código de recuperación', email_otp: 'código por correo', idp: 'Proveedor de identidad', sso: 'SSO empresarial', passkey: 'Llave de acceso' },
  ui: {
    scanQr: 'Escanea el código QR con tu app de autenticación o escribe el secreto, y luego introduce el código de 6 dígitos que muestra.',
    qrAlt: 'Código QR del secreto de autenticación',
    secret: 'Secreto',
    recoveryCodes: 'Códigos de recuperación',
    recoveryCodesFile: 'Códigos de recuperación del espacio de trabajo {{workspace}}. Cada uno te permite iniciar sesión una vez.',
    saveCodes: 'Guarda estos códigos de recuperación en un lugar seguro. Cada uno te permite iniciar sesión una vez si pierdes tu app de autenticación. Solo se muestran ahora.',
    copyCodes: 'Copiar códigos',
    downloadCodes: 'Descargar como .txt',
    copied: 'Códigos de recuperación copiados.',
    copyFailed: 'El navegador no permitió copiar. Selecciona los códigos o descárgalos.',
    loading: 'Cargando…',
  },
};
