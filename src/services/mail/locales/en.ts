/**
 * Every sentence of the mails, in English (the original; de.ts, fr.ts and es.ts are typed against it).
 * `{{workspace}}` is the workspace's name as mails show it (quoted and defanged, see
 * tenant-name.ts); `_one`/`_other` keys are plural forms chosen by `count`.
 */
export const mailEn = {
  layout: {
    footer: 'You get this mail because of your account in {{workspace}}.',
    footerInvite: 'You get this mail because an admin of {{workspace}} invited {{email}}.',
    support: 'Need help? Contact {{workspace}}: {{supportUrl}}',
    orOpen: 'If the button does not work, open this link:',
  },
  lifetime: { once: 'The link works once and expires in {{lifetime}}.' },
  verification: {
    subject: 'Confirm your email address for {{workspace}}',
    intro: 'Please confirm that {{email}} is your email address for {{workspace}}.',
    action: 'Confirm email address',
    outro: 'If you did not sign up, you can ignore this mail.',
  },
  passwordReset: {
    subject: 'Reset your password for {{workspace}}',
    intro: 'We received a request to reset the password of {{email}} for {{workspace}}.',
    action: 'Choose a new password',
    outro: 'If you did not ask for this, ignore this mail: your password stays as it is.',
  },
  emailChange: {
    subject: 'Confirm your new email address for {{workspace}}',
    intro: 'Someone asked to make {{email}} the sign-in email of an account in {{workspace}}.',
    action: 'Confirm new email address',
    outro: 'If this was not you, ignore this mail: nothing changes until the link is opened.',
  },
  emailChanged: {
    subject: 'Your sign-in email was changed ({{workspace}})',
    body: 'The sign-in email of your account in {{workspace}} was changed from {{email}} to {{newEmail}}.',
    advice:
      'If this was you, there is nothing to do: this address no longer signs in. If it was not you, contact an admin of the workspace right away: they can restore your address and end every session of the account.',
  },
  emailOtp: {
    subject: 'Your sign-in code for {{workspace}}',
    intro: 'Here is your sign-in code for {{workspace}}:',
    validity: 'It works once and expires in {{lifetime}}.',
    outro: 'If you did not ask for it, ignore this mail: nobody can sign in with the code alone.',
  },
  factorChange: {
    subject: {
      totp_enrolled: 'Authenticator app added to your account ({{workspace}})',
      totp_disabled: 'Authenticator app removed from your account ({{workspace}})',
      passkey_added: 'Passkey added to your account ({{workspace}})',
      passkey_removed: 'Passkey removed from your account ({{workspace}})',
      recovery_codes_regenerated: 'New recovery codes for your account ({{workspace}})',
      passkey_clone_suspected: 'A passkey sign-in was refused ({{workspace}})',
    },
    what: {
      totp_enrolled: 'An authenticator app was added as a second step of sign-in to your account {{email}} in {{workspace}}.',
      totp_disabled: 'The authenticator app was removed from your account {{email}} in {{workspace}}.',
      passkey_added: 'A passkey, which signs you in without a password, was added to your account {{email}} in {{workspace}}.',
      passkey_removed: 'A passkey was removed from your account {{email}} in {{workspace}}.',
      recovery_codes_regenerated: 'A new set of recovery codes was created for your account {{email}} in {{workspace}}; the previous codes no longer work.',
      passkey_clone_suspected:
        'A sign-in to your account {{email}} in {{workspace}} with one of your passkeys was refused: the passkey looks copied, as its signature counter went backwards.',
    },
    byAdmin: 'An admin of the workspace made this change.',
    advice: 'If this was you, there is nothing to do. If it was not, reset your password right away and ask an admin of the workspace to undo the change and end your sessions.',
  },
  recoveryCodeUsed: {
    subject: 'A recovery code was used to sign in ({{workspace}})',
    body: 'A recovery code was just used to sign in to your account {{email}} in {{workspace}}.',
    remaining_one: 'You have {{count}} unused recovery code left.',
    remaining_other: 'You have {{count}} unused recovery codes left.',
    advice:
      'If this was you, consider creating a new set of recovery codes on your account page. If it was not, reset your password right away and ask an admin of the workspace to end your sessions.',
  },
  invite: {
    subject: 'You are invited to join {{workspace}}',
    intro_Member: 'You have been invited to join {{workspace}} as a member.',
    intro_Admin: 'You have been invited to join {{workspace}} as an admin.',
    notice: 'The workspace name was chosen by its admins; we have not checked it.',
    action: 'Accept the invitation',
    outro: 'You will choose your password when you accept. The invitation is valid until {{date}}.',
  },
  webhookDisabled: {
    subject: 'A webhook was turned off in {{workspace}}',
    body: 'Every delivery to the webhook {{url}} has failed for a long time, so we turned it off.',
    advice: 'Fix the receiving endpoint, then turn the webhook on again in the console.',
  },
  issuerChanged: {
    subject: 'The identity provider was changed ({{workspace}})',
    body: '{{changedBy}} changed the identity provider of {{workspace}}: sign-in with the provider now trusts {{newIssuer}} instead of {{previousIssuer}}.',
    advice:
      'If this change was not agreed, remove the provider’s credentials in the console’s settings right away, end the sessions opened through it, and review the audit log.',
  },
  ssoConnectionChanged: {
    subject: 'A single sign-on connection was changed ({{workspace}})',
    created: '{{changedBy}} added the single sign-on connection “{{name}}” to {{workspace}}: people of {{domains}} now sign in at {{provider}}.',
    updated: '{{changedBy}} changed the single sign-on connection “{{name}}” of {{workspace}}: people of {{domains}} sign in at {{provider}}.',
    deleted: '{{changedBy}} removed the single sign-on connection “{{name}}” from {{workspace}}.',
    advice: 'Whoever controls a connection decides who signs in for its domains. If this change was not agreed, remove the connection in the console right away and review the audit log.',
  },
} as const;
