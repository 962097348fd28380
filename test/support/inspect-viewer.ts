/**
 * The viewer's browser tests share these: `startViewer` runs `weft inspect` on a free port as a
 * tracked child (the suite's process hygiene) and waits for the URL it prints; `openPage` opens a
 * page that records every script error and dialog — nothing may run in it that Weft did not ship.
 */
import type { ChildProcess } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { spawnTracked } from './children.js';
import { weftBin } from './cli.js';

export interface Viewer {
  /** The URL it printed (with ?token= when it has one). */
  url: string;
  /** `http://host:port`, what a page of it sends as its Origin. */
  origin: string;
  child: ChildProcess;
  /** What it printed so far, stdout and stderr (for a failure's message). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start `weft inspect ...args` on a free port and wait (up to 60 s) for the URL it prints. It runs
 * at the suite's own priority (`--nice 0`) unless `args` choose one or `userPriority` asks for the
 * user's default (nice 10): these tests check what the viewer does, and inspect-nice.test.ts how it
 * shares the CPU — beside a busy suite, a viewer at nice 10 would mostly wait for the scheduler.
 */
export async function startViewer(args: string[], options: { userPriority?: boolean } = {}): Promise<Viewer> {
  const priority = options.userPriority || args.some((a) => a === '--nice' || a.startsWith('--nice=')) ? [] : ['--nice', '0'];
  const child = spawnTracked(process.execPath, [weftBin, 'inspect', '--port', '0', ...priority, ...args], { label: 'weft inspect' });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft inspect printed no URL within 60 s: ${out}`)), 60_000);
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /http:\/\/\S+/.exec(out);
      if (m) (clearTimeout(timer), resolve(m[0]));
    });
    child.stderr!.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`weft inspect exited (${code}) before serving: ${out}`))));
  });
  const u = new URL(url);
  return {
    url,
    origin: `${u.protocol}//${u.host}`,
    child,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A new page of `browser` that records any script error or dialog in `errors`. */
export async function openPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('dialog', (dialog) => {
    errors.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { page, errors };
}
