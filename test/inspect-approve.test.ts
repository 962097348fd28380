/**
 * Approvals from the viewer's page, in a real headless Chromium: an invocation of a strict travel
 * domain (its booking needs a person's approval) is approved by a click in a viewer started with
 * `--domain`, which resumes it itself, and the page follows it to `completed`, verified against
 * --public-key; rejected the same way, it ends failed (or handed off), sealed. A decision POST
 * without the token is a 401, with a foreign or no Origin a 403, with a bad body a 400 — and none of
 * them writes anything; a viewer without --domain puts the decision in the inbox, as
 * `weft approve --leave-to-serve` does, for `weft resume` to go on from. Over a Redis the writers
 * would refuse (no AOF), the buttons are disabled and the page shows the `weft approve` command.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium } from './support/chromium.js';
import { awaitingApproval as awaiting, decideInPage, lastLine as last } from './support/inspect-flows.js';
import { openPage, startViewer } from './support/inspect-viewer.js';
import { serveInspector } from './support/inspector.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { runInWorkspace } from './support/runs-here.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-approve-'));
const hasChromium = requireChromium();
let browser: Browser;

const kinds = (journal: string) => readFileSync(journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; body: Record<string, unknown> });
const awaitingApproval = (dir: string, version: string, extra: string[] = []) => awaiting(root, dir, version, extra);
/** The same invocation made in this process as `weft run` makes it (test/support/runs-here.ts): a fixture the page decides. */
async function awaitingHere(dir: string, version: string) {
  const domain = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version });
  const run = await runInWorkspace(domain, { dir, seed: '3' });
  expect(run.status, run.reason ?? '').toBe('awaiting_approval');
  return { run, domain };
}

beforeAll(async () => {
  assertBuilt();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(hasChromium)('approvals from the page, over a workspace', () => {
  test('approved by a click in a viewer started with --domain: resumed by it, followed to completed, verified', async () => {
    const dir = path.join(root, 'approve');
    const { run, domain } = await awaitingApproval(dir, 'page-approve');
    const viewer = await startViewer(['--dir', dir, '--domain', domain, '--public-key', run.publicKey]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.url}invocations/${run.id}`);
      await page.locator('#next table.asked').waitFor();
      await page.locator('#approve-form[data-enabled="true"]').waitFor(); // once /api/approvals answered
      expect(await page.locator('#approve').isDisabled()).toBe(false);
      expect(await page.locator('#approve-status').textContent()).toBe('this viewer resumes it once decided');
      expect(await decideInPage(page, '#approve', 'ops <b>lead</b>', 'within budget after all', viewer.output)).toBe('completed');
      expect(await page.locator('#verdict h2').textContent()).toBe('✓ verified in this page');
      expect(await page.locator('#verdict').textContent()).toContain(`${run.publicKey} (given with --public-key)`);
      // The decision is recorded as the person made it, and what they typed is shown as text.
      const decided = kinds(run.journal).find((r) => r.kind === 'approval.decided')!;
      expect(decided.body).toMatchObject({ decision: 'approved', by: 'ops <b>lead</b>', note: 'within budget after all' });
      expect(await page.locator('section.epoch .note', { hasText: 'approval: approved by ops <b>lead</b>' }).count()).toBe(1);
      expect(await page.locator('main b').count()).toBe(0);
      expect(kinds(run.journal).at(-1)!.kind).toBe('invocation.sealed');
      const fingerprint = await page.locator('#fingerprint').textContent();
      const verified = await weft(['verify', run.journal, '--public-key', run.publicKey, '--json']);
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stdout).toContain(fingerprint!);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  });

  test('rejected by a click: the run goes on to a sealed end (failed or handed off), nothing charged', async () => {
    const dir = path.join(root, 'reject');
    const { run, domain } = await awaitingHere(dir, 'page-reject');
    const viewer = await serveInspector(['--dir', dir, '--domain', domain, '--public-key', run.publicKey]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.url}invocations/${run.id}`);
      const end = await decideInPage(page, '#reject', 'ops', 'too expensive');
      expect(['failed', 'handed off']).toContain(end);
      const records = kinds(run.journal);
      expect(records.find((r) => r.kind === 'approval.decided')!.body).toMatchObject({ decision: 'rejected', by: 'ops', note: 'too expensive' });
      expect(records.at(-1)!.kind).toBe('invocation.sealed');
      expect(records.filter((r) => r.kind === 'step.dispatched' && r.body.actuator === 'card.charge')).toHaveLength(0);
      expect(await page.locator('#verdict h2').textContent()).toBe('✓ verified in this page');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  });

  test('a redraw while a person types their name keeps the field, its focus and its caret: nothing typed is lost', async () => {
    const dir = path.join(root, 'typing');
    const { run, domain } = await awaitingHere(dir, 'page-typing');
    const viewer = await serveInspector(['--dir', dir, '--domain', domain, '--public-key', run.publicKey]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.url}invocations/${run.id}`);
      await page.locator('#approve-form[data-enabled="true"]').waitFor();
      await page.locator('#approve-by').click();
      await page.keyboard.type('o');
      // The page redraws as it does when the plans or a record arrive (here: a trusted key dropped in, KEY_CHANGED).
      await page.locator('#app > .crumbs').evaluate((crumbs) => crumbs.setAttribute('data-before', ''));
      await page.evaluate(() => (globalThis as unknown as { document: { dispatchEvent(e: unknown): boolean } }).document.dispatchEvent(new Event('weft-trusted-key')));
      await page.locator('#app > .crumbs[data-before]').waitFor({ state: 'detached' }); // drawn anew
      await page.keyboard.type('ps');
      expect(await page.locator('#approve-by').inputValue()).toBe('ops');
      expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id)).toBe('approve-by');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  });

  test('a decision needs the token and this viewer\'s Origin (401, 403), bad input is a 400, and none of them writes; a good one goes to the inbox for weft resume', async () => {
    const dir = path.join(root, 'posts');
    const { run } = await awaitingHere(dir, 'page-posts');
    const token = 'a-token-nobody-guesses-5678';
    const viewer = await serveInspector(['--dir', dir, '--token', token]); // no --domain: the inbox only, as --leave-to-serve
    try {
      const decisionUrl = `${viewer.origin}/api/invocations/${run.id}/decision`;
      const body = JSON.stringify({ decision: 'approved', by: 'ops', note: 'ok' });
      const post = (headers: Record<string, string>, b = body) => fetch(decisionUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b });
      const auth = { authorization: `Bearer ${token}` };
      expect((await post({ origin: viewer.origin })).status).toBe(401);
      expect((await post({ origin: viewer.origin, authorization: 'Bearer wrong-token-of-some-length' })).status).toBe(401);
      expect((await post({ ...auth, origin: 'http://evil.example' })).status).toBe(403);
      expect((await post({ ...auth, origin: viewer.origin.replace('127.0.0.1', 'localhost') })).status).toBe(403);
      expect((await post(auth)).status).toBe(403); // no Origin at all
      const bad = await post({ ...auth, origin: viewer.origin }, JSON.stringify({ decision: 'maybe', by: 'ops' }));
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toBe('decision must be "approved" or "rejected"');
      expect((await post({ ...auth, origin: viewer.origin }, JSON.stringify({ decision: 'approved', by: ' ' }))).status).toBe(400);
      expect((await post({ ...auth, origin: viewer.origin }, 'not json')).status).toBe(400);
      expect((await post({ ...auth, origin: viewer.origin }, JSON.stringify({ decision: 'approved', by: 'ops', note: 'x'.repeat(9000) }))).status).toBe(413);
      expect((await post({ ...auth, origin: viewer.origin }, JSON.stringify({ decision: 'approved', by: 'ops', extra: 1 }))).status).toBe(400);
      const described = async () => (await (await fetch(`${viewer.origin}/api/invocations/${run.id}`, { headers: auth })).json()) as { status: string; waiting: { decided: unknown } };
      expect((await described()).waiting.decided).toBeNull(); // nothing written
      // The page: it says weft serve (or weft resume) goes on, and a click puts the decision in the inbox.
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.url.replace(/\/\?/, `/invocations/${run.id}?`)}`);
      await page.locator('#approve-form[data-enabled="true"]').waitFor();
      expect(await page.locator('#approve-status').textContent()).toContain('weft serve');
      await page.fill('#approve-by', 'ops');
      await page.fill('#approve-note', 'ok');
      await page.click('#approve');
      await page.locator('#approve-form[data-decided="approved"]').waitFor();
      expect(await page.locator('#approve-status').textContent()).toContain(`weft resume ${run.id}`);
      expect((await described()).waiting.decided).toEqual({ decision: 'approved', by: 'ops', note: 'ok' });
      expect((await described()).status).toBe('awaiting_approval');
      // weft resume takes the decision from the inbox and completes the run; the page, following, shows the end.
      const resumed = await weft(['resume', run.id, '--dir', dir, '--json']);
      expect(last(resumed.stdout).status, resumed.stderr).toBe('completed');
      expect(kinds(run.journal).find((r) => r.kind === 'approval.decided')!.body).toMatchObject({ decision: 'approved', by: 'ops', note: 'ok' });
      await page.locator('.summary .status', { hasText: /^completed$/ }).waitFor({ timeout: 30_000 });
      // Decided and ended: a decision now is refused (409), naming why.
      const late = await post({ ...auth, origin: viewer.origin });
      expect(late.status).toBe(409);
      expect(((await late.json()) as { error: string }).error).toContain('not awaiting approval');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  });
});

const redis = requireRedis();
describe.runIf(hasChromium && (redis || process.env.CI === 'true'))('approvals from the page, over a Redis the writers refuse', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ aof: false });
  });
  afterAll(async () => server?.stop());

  test('the buttons are disabled, the page shows the weft approve command, and a POST writes nothing (409)', async () => {
    const dir = path.join(root, 'redis');
    const { run } = await awaitingApproval(dir, 'page-redis', ['--redis', server.url, '--redis-durability', 'relaxed']);
    const viewer = await startViewer(['--redis', server.url]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.url}invocations/${run.id}`);
      await page.locator('#approve-form[data-enabled="false"]').waitFor();
      expect(await page.locator('#approve').isDisabled()).toBe(true);
      expect(await page.locator('#reject').isDisabled()).toBe(true);
      expect(await page.locator('#approve-status').textContent()).toContain("fails the writers' durability check");
      const command = await page.locator('#approve-command').textContent();
      expect(command).toContain(`weft approve ${run.id} --by "$USER"`);
      expect(command).toContain('--redis');
      const res = await fetch(`${viewer.origin}/api/invocations/${run.id}/decision`, { method: 'POST', headers: { 'content-type': 'application/json', origin: viewer.origin }, body: JSON.stringify({ decision: 'approved', by: 'ops' }) });
      expect(res.status).toBe(409);
      const described = (await (await fetch(`${viewer.origin}/api/invocations/${run.id}`)).json()) as { status: string; waiting: { decided: unknown } };
      expect(described.waiting.decided).toBeNull();
      expect(described.status).toBe('awaiting_approval');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  });
});
