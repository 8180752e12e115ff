import { useState } from 'react';

/** The initials shown without a picture: the first letters of the first and last word of the name, else the first letter of the address. */
export function initialsOf(name: string | null, email: string): string {
  const words = (name ?? '').trim().split(/\s+/).filter(Boolean);
  const letters = words.length === 0 ? [email] : words.length === 1 ? [words[0]!] : [words[0]!, words[words.length - 1]!];
  return letters.map((word) => Array.from(word)[0] ?? '').join('').toLocaleUpperCase();
}

/**
 * A person's picture (the `picture` of the User object, an https URL) in a circle, or their initials
 * when there is none or it does not load. With `alt` it is an image of its own (the account page,
 * a user's page); without, it is decorative beside the name that says the same (the users list).
 * The picture is fetched without a referrer, so the host of the URL does not learn which console page
 * showed it.
 */
export function Avatar({ name, email, picture, alt, size = 'small' }: {
  name: string | null;
  email: string;
  picture: string | null;
  alt?: string;
  size?: 'small' | 'large';
}) {
  // a new URL gets a fresh try (a picture that failed once stays replaced by the initials)
  return <AvatarFace key={picture ?? ''} name={name} email={email} picture={picture} alt={alt} size={size} />;
}

function AvatarFace({ name, email, picture, alt, size }: { name: string | null; email: string; picture: string | null; alt?: string; size: 'small' | 'large' }) {
  const [failed, setFailed] = useState(false);
  const className = `avatar avatar-${size}`;
  if (picture && !failed) {
    return <img className={className} src={picture} alt={alt ?? ''} referrerPolicy="no-referrer" loading="lazy" decoding="async" onError={() => setFailed(true)} />;
  }
  const initials = initialsOf(name, email);
  return alt ? (
    <span className={className} role="img" aria-label={alt}>{initials}</span>
  ) : (
    <span className={className} aria-hidden="true">{initials}</span>
  );
}
