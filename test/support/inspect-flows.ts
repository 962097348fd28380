/**
 * What the viewer's browser tests do in a page, shared by the embedded and the Redis (workers and
 * serve) files: follow a run from the list to its verified end (`followARun`), decide an approval
 * by a click (`decideInPage`), and make an invocation of the strict travel domain that rests
 * awaiting approval (`awaitingApproval`). Assertions are vitest's, so a helper fails the test that
 * called it, naming what the page did not show.
 */
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { pageScreenshot } from './chromium.js';
import { weft } from './cli.js';
import { openPage } from './inspect-viewer.js';
import { writeStrictTravelDomain } from './strict-travel.js';

/** What `weft run|resume --json` prints last. */
export interface RunLine {
  id: string;
  status: string;
  fingerprint: string;
  publicKey: string;
  journal: string;
}
export const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as RunLine;


/** The seqs the invocation page lists in its journal, in the order shown. */
export const shownSeqs = async (page: Page) => (await page.locator('details.record .seq').allTextContents()).map(Number);

/**
 * The list page open before the run: its row appears and ends completed; the invocation page, opened
 * while the run is in flight, shows records arriving and ends completed and verified. `store` names
 * the screenshots; `whileRunning` may look at the invocation page before the run ends. Returns the run, how many records the page showed while it ran, and every seq it
 * showed at the end.
 */
export async function followARun(
  browser: Browser,
  store: string,
  viewerUrl: string,
  start: () => Promise<RunLine>,
  whileRunning: (page: Page) => Promise<void> = async () => undefined,
): Promise<{ run: RunLine; shownWhileRunning: number; seqs: number[] }> {
  const { page: list, errors: listErrors } = await openPage(browser);
  await list.goto(viewerUrl);
  await list.locator('table.invocations').waitFor();
  await list.locator('body[data-live="live"]').waitFor({ state: 'attached' });
  expect(await list.locator('#live-state').textContent()).toBe('● live');
  const running = start();
  // The row arrives over the WebSocket (the page is not reloaded).
  const row = list.locator('tr[data-id]').first();
  await row.waitFor({ timeout: 30_000 });
  const id = (await row.getAttribute('data-id'))!;
  const { page, errors } = await openPage(browser);
  await page.goto(`${viewerUrl}invocations/${id}`);
  await page.locator('#verdict').waitFor();
  expect(await page.locator('[data-field="status"] .status').textContent()).toBe('running');
  const shownWhileRunning = (await shownSeqs(page)).length;
  await pageScreenshot(page, `weft-inspect-live-${store}-running.png`);
  await whileRunning(page);
  const run = await running;
  expect(run.status).toBe('completed');
  expect(run.id).toBe(id);
  // The records that landed after the page loaded arrive; it ends completed, verified against the key.
  await page.locator('#verdict h2', { hasText: '✓ verified in this page' }).waitFor({ timeout: 15_000 });
  await page.locator('[data-field="status"] .status', { hasText: 'completed' }).waitFor({ timeout: 15_000 });
  expect(await page.locator('#fingerprint').textContent()).toBe(run.fingerprint);
  const seqs = await shownSeqs(page);
  await list.locator(`tr[data-id="${id}"] .status`, { hasText: 'completed' }).waitFor({ timeout: 15_000 });
  expect(listErrors).toEqual([]);
  expect(errors).toEqual([]);
  await pageScreenshot(page, `weft-inspect-live-${store}-ended.png`);
  await page.close();
  await list.close();
  return { run, shownWhileRunning, seqs };
}

/** An invocation of the strict travel domain (a domain file written under `root`), resting awaiting approval in `dir`. */
export async function awaitingApproval(root: string, dir: string, version: string, extra: string[] = [], env: Record<string, string> = {}, seed = '3'): Promise<{ run: RunLine; domain: string }> {
  const domain = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version });
  const result = await weft(['run', domain, '--seed', seed, '--dir', dir, '--json', ...extra], env);
  const run = lastLine(result.stdout);
  expect(run.status, result.stderr).toBe('awaiting_approval');
  return { run, domain };
}

/** Decide in the page: fill by and note, click the button, and wait for the page to show the end. */
export async function decideInPage(page: Page, button: '#approve' | '#reject', by: string, note: string, viewerOutput?: () => string): Promise<string> {
  await page.locator('#approve-form[data-enabled="true"]').waitFor();
  await page.fill('#approve-by', by);
  await page.fill('#approve-note', note);
  await page.click(button);
  // The page follows the run and reloads at its end: the form is gone and the summary names the end.
  // (Locators, not a function evaluated in the page: its Content-Security-Policy allows no eval.)
  // The run yields to the event loop between durable appends, so the page may show it running first:
  // wait for the status it ends in, as a person watching would.
  await page
    .locator('#approve-form')
    .waitFor({ state: 'detached', timeout: 90_000 })
    .catch(async (err: unknown) => {
      // Say what the page said of the decision (sent, refused, could not send) and what the viewer printed.
      const said = await page.locator('#approve-status').textContent().catch(() => null);
      throw new Error(`the approval form stayed: its status says ${JSON.stringify(said)}; the viewer printed: ${viewerOutput?.().slice(-2_000) ?? '(not given)'}; ${err instanceof Error ? err.message : String(err)}`);
    });
  await page.locator('.summary .status', { hasText: /^(completed|failed|handed off|cancelled|superseded)$/ }).waitFor({ timeout: 90_000 });
  await page.locator('#verdict').waitFor();
  return (await page.locator('.summary .status').textContent()) ?? '';
}
