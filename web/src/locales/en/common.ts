/**
 * Strings every page shares: the page frame (footer, theme and language switchers), errors that do
 * not come with a `details.reason`, and validation issues in words (web/src/messages.ts).
 * `{{name}}` is filled in by i18next; keys ending in `_one`/`_other` are plural forms.
 */
export const common = {
  skipToContent: 'Skip to content',
  confirm: { title: 'Please confirm', cancel: 'Cancel' },
  notFound: { title: 'Page not found', home: 'Home', workspaceTitle: 'No workspace here', workspace: 'There is no workspace at /app/{{slug}}. Check the link, or open another workspace.', openAnother: 'Open a workspace' },
  footer: {
    theme: 'Theme',
    themes: { system: 'System', light: 'Light', dark: 'Dark' },
    language: 'Language',
    support: 'Help and support',
  },
  errors: {
    network: 'Something went wrong. Check your connection and try again.',
    rateLimitedWait: 'Too many attempts. Try again in {{wait}}.',
    passkeyWrongHost: 'Passkeys for this workspace work on {{rpId}} only, and this page is open at {{host}}. Open {{url}} and try again.',
    passkeyPrompt: 'The passkey was not used: the prompt was cancelled, timed out, or this device has no passkey for this site.',
    downloadFailed: 'The download failed ({{status}}).',
  },
  issues: {
    required: 'This field is required.',
    minLength_one: 'Use at least {{count}} character.',
    minLength_other: 'Use at least {{count}} characters.',
    maxLength_one: 'Use at most {{count}} character.',
    maxLength_other: 'Use at most {{count}} characters.',
    minNumber: 'Use {{min}} or more.',
    maxNumber: 'Use {{max}} or less.',
    email: 'Enter an email address like name@example.com.',
    option: 'Choose one of the options.',
    url: 'Enter a full URL, starting with https://.',
    controlCharacters: 'Remove line breaks, tabs and other control characters.',
    dateTime: 'Enter a date and time.',
  },
  sessionMethods: { password: 'Password', totp: 'authenticator app', recovery_code: 'recovery code', email_otp: 'emailed code', idp: 'Identity provider', sso: 'Enterprise SSO', passkey: 'Passkey' },
  ui: {
    scanQr: 'Scan the QR code with your authenticator app, or type the secret, then enter the 6-digit code it shows.',
    qrAlt: 'QR code of the authenticator secret',
    secret: 'Secret',
    recoveryCodes: 'Recovery codes',
    recoveryCodesFile: 'Recovery codes for the workspace {{workspace}}. Each one signs you in once.',
    saveCodes: 'Save these recovery codes somewhere safe. Each one signs you in once if you lose your authenticator app. They are shown only now.',
    copyCodes: 'Copy codes',
    downloadCodes: 'Download as .txt',
    copied: 'Recovery codes copied.',
    copyFailed: 'The browser did not allow copying. Select the codes or download them instead.',
    loading: 'Loading…',
  },
} as const;
