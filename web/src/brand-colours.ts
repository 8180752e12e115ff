import { wcagContrast } from 'culori';
import type { CSSProperties } from 'react';

/** A workspace's colour on its pages (docs/web.md "Branding"), as CSS custom properties. */

/** The surface secondary buttons sit on in each theme (`--color-surface` of web/src/styles.css; test/web/brand-colours.test.ts checks they agree). */
export const THEME_SURFACES = { light: '#ffffff', dark: '#1a2129' } as const;

/** WCAG 2.1 AA: text 4.5:1 (1.4.3), a component's border 3:1 (1.4.11). */
const TEXT_CONTRAST = 4.5;
const BORDER_CONTRAST = 3;

/**
 * The custom properties that put the workspace's colour on its buttons: primary buttons' background
 * (white text on it, which the API checked at 4.5:1), and the text and border of secondary buttons in
 * each theme where the colour keeps its contrast on that theme's surface; where it does not (often a
 * dark colour on the dark theme), the property is `initial` and the theme's own colour stays.
 * @returns undefined without a colour (the pages' own colours).
 */
export function brandStyle(primaryColor: string | null | undefined): CSSProperties | undefined {
  if (!primaryColor || !/^#[0-9a-fA-F]{6}$/.test(primaryColor)) return undefined;
  const style: Record<string, string> = { '--color-button': primaryColor, '--color-button-text': '#ffffff' };
  for (const theme of ['light', 'dark'] as const) {
    const contrast = wcagContrast(primaryColor, THEME_SURFACES[theme]);
    // `initial` (no value): the stylesheet's fallback, the theme's colour, even inside another branded element
    style[`--brand-secondary-text-${theme}`] = contrast >= TEXT_CONTRAST ? primaryColor : 'initial';
    style[`--brand-secondary-border-${theme}`] = contrast >= BORDER_CONTRAST ? primaryColor : 'initial';
  }
  return style as CSSProperties;
}
