import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { brandStyle, THEME_SURFACES } from '../../web/src/brand-colours.js';

/** The `--color-surface` of each theme in web/src/styles.css. */
function stylesheetSurfaces(): { light: string; dark: string } {
  const css = readFileSync(path.resolve('web/src/styles.css'), 'utf8');
  const light = /:root \{[^}]*--color-surface: (#[0-9a-f]{6});/.exec(css)?.[1];
  const dark = /:root\[data-theme='dark'\] \{[^}]*--color-surface: (#[0-9a-f]{6});/.exec(css)?.[1];
  const system = /@media \(prefers-color-scheme: dark\) \{\s*:root:not\(\[data-theme='light'\]\) \{[^}]*--color-surface: (#[0-9a-f]{6});/.exec(css)?.[1];
  expect(system).toBe(dark);
  return { light: light!, dark: dark! };
}

describe('the workspace colour on buttons (web/src/brand.tsx)', () => {
  it('judges contrast against the surfaces the stylesheet really has', () => {
    expect(stylesheetSurfaces()).toEqual(THEME_SURFACES);
  });

  it('gives secondary buttons the colour for text at 4.5:1 and for borders at 3:1 on each theme\'s surface, else the theme\'s own', () => {
    // 5.47:1 on white, 2.97:1 on the dark surface
    expect(brandStyle('#0f766e')).toEqual({
      '--color-button': '#0f766e', '--color-button-text': '#ffffff',
      '--brand-secondary-text-light': '#0f766e', '--brand-secondary-border-light': '#0f766e',
      '--brand-secondary-text-dark': 'initial', '--brand-secondary-border-dark': 'initial',
    });
    // 3.03:1 on the dark surface: a border, not text
    expect(brandStyle('#0e7490')).toMatchObject({ '--brand-secondary-text-dark': 'initial', '--brand-secondary-border-dark': '#0e7490' });
    expect(brandStyle(null)).toBeUndefined();
    expect(brandStyle('red')).toBeUndefined();
  });
});
