/**
 * A real headless Chromium for the viewer's tests: Debian's `chromium` (/usr/bin/chromium, or
 * WEFT_TEST_CHROMIUM) driven by playwright-core. `requireChromium()` works like requireRedis: without
 * the browser, tests fail under CI (CI=true; .ci/run installs it) and are skipped, loudly, elsewhere.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const chromiumPath = process.env.WEFT_TEST_CHROMIUM ?? '/usr/bin/chromium';

export const NO_CHROMIUM_MESSAGE = `${chromiumPath} is missing: the viewer's browser tests need it (apt-get install chromium; .ci/run installs it)`;

export function chromiumAvailable(): boolean {
  try {
    accessSync(chromiumPath, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether the browser tests can run (see the header). */
export function requireChromium(): boolean {
  if (chromiumAvailable()) return true;
  if (process.env.CI === 'true') return false;
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING the viewer's browser tests: ${NO_CHROMIUM_MESSAGE}\n${'!'.repeat(78)}\n`);
  return false;
}

/** One headless browser (a test file shares it; close it in afterAll). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'], headless: true });
}

/**
 * Where the screenshots go: the folder WEFT_TEST_ARTIFACTS names. Unset, none is taken — a screenshot
 * is evidence for a person to look at (docs/, a review), never asserted on, and rendering and
 * encoding one costs the suite CPU on every run.
 */
export const screenshotFolder: string | undefined = process.env.WEFT_TEST_ARTIFACTS || undefined;

/** The whole page as a screenshot named `name` in WEFT_TEST_ARTIFACTS (nothing without it). */
export async function pageScreenshot(page: import('playwright-core').Page, name: string): Promise<void> {
  if (screenshotFolder === undefined) return;
  mkdirSync(screenshotFolder, { recursive: true });
  await page.screenshot({ path: path.join(screenshotFolder, name), fullPage: true });
}

/**
 * A screenshot of one part of the page, named `name` in WEFT_TEST_ARTIFACTS (nothing without it).
 * The viewer redraws a section as records arrive, so the element can be replaced while Playwright
 * waits for it to be stable ("Element is not attached to the DOM"): the shot is taken again of the
 * new one, up to 5 times.
 */
export async function screenshotOf(page: import('playwright-core').Page, selector: string, name: string): Promise<void> {
  if (screenshotFolder === undefined) return;
  mkdirSync(screenshotFolder, { recursive: true });
  const file = path.join(screenshotFolder, name);
  for (let attempt = 1; ; attempt++) {
    try {
      await page.locator(selector).screenshot({ path: file, timeout: 10_000 });
      return;
    } catch (error) {
      // A section the page redraws meanwhile is replaced: its old node is detached, or for an instant not visible.
      if (attempt >= 5 || !/not attached|detached|not visible|not an HTMLElement/i.test(String(error))) throw error;
      await page.waitForTimeout(50 * attempt);
    }
  }
}
