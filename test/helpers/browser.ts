import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { expect } from 'vitest';

/** Debian's Chromium, which the browser tests drive through playwright-core (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';
/** Whether Chromium is installed here. */
export const hasChromium = existsSync(CHROMIUM);
/** Where the browser tests leave their screenshots. */
export const SCREENSHOTS = path.resolve('test-results/screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 360, height: 740 };

/**
 * Builds the web front end (Vite) and launches headless Chromium with the flags this machine needs
 * (no sandbox as root, no background networking on a closed network); makes the screenshot folder.
 */
export async function buildAndLaunchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await build({ configFile: path.resolve('web/vite.config.ts'), logLevel: 'warn' });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true, // each launch uses a fresh temporary profile (user data dir)
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** axe (WCAG 2.1 A and AA) on the page as it is now, in the light and the dark theme; @returns the violations. */
export async function axeBothThemes(page: Page, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    for (const v of result.violations) found.push(`${scheme} ${name}: ${v.id} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

/** Nothing scrolls sideways at 360 px: the page is no wider than the window (a screenshot is kept). */
export async function fitsPhone(page: Page, name: string): Promise<void> {
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
  await page.setViewportSize(DESKTOP);
}

/**
 * A new page of `context` signed in through the hosted sign-in page (`{base}/app/{slug}/sign-in`) as
 * `email`, left on the account page; the browser's console errors and page errors are pushed to
 * `errors` (with the page's URL) for a failing test to print.
 */
export async function signedInPage(context: BrowserContext, base: string, slug: string, email: string, password: string, errors: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (msg) => msg.type() === 'error' && errors.push(`${page.url()}: ${msg.text()}`));
  page.on('pageerror', (err) => errors.push(`${page.url()}: ${err.message}`));
  await page.goto(`${base}/app/${slug}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
  return page;
}

/**
 * Answers the console's confirmation (web/src/confirm.tsx, an `alertdialog`) by pressing the button
 * named `action` ("Cancel" cancels); waits for the dialog to close. @returns the question it asked.
 */
export async function answerConfirmation(page: Page, action: string): Promise<string> {
  const dialog = page.getByRole('alertdialog');
  await dialog.waitFor();
  const question = (await dialog.locator('p').textContent()) ?? '';
  await dialog.getByRole('button', { name: action, exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  return question;
}
