/**
 * The pages' colour theme (docs/web.md "Themes"): `system` follows `prefers-color-scheme`, `light`
 * and `dark` override it. The choice is kept in localStorage and applied as `data-theme` on
 * `<html>`; this module is imported before anything renders, so the first paint has the right
 * colours (the Content-Security-Policy allows no inline script).
 */
export const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

const STORAGE_KEY = 'theme';

/** The stored choice, `system` when none (or storage is unavailable). */
export function storedTheme(): Theme {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return (THEMES as readonly string[]).includes(value ?? '') ? (value as Theme) : 'system';
  } catch {
    return 'system';
  }
}

/** Applies a theme to the document and remembers it. */
export function applyTheme(theme: Theme): void {
  if (theme === 'system') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', theme);
  try {
    if (theme === 'system') window.localStorage.removeItem(STORAGE_KEY);
    else window.localStorage.setItem(STORAGE_KEY, theme);
  } catch {
    // storage refused (private mode): the choice lasts for this page only
  }
}

applyTheme(storedTheme());
