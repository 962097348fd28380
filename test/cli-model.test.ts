/**
 * `weft run travel --model-url … --model …`: the travel intent run against a real HTTP endpoint
 * that speaks the OpenAI chat-completions protocol (a local server standing in for Ollama or a
 * hosted API), in a child process. Its replies are recorded like the scripted ones; one of them is
 * prose, which is rejected and re-prompted with the reason; the journal then replays without the
 * server and verifies.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { TRAVEL_GOALS } from '../examples/travel/transcript.js';
import { assertBuilt, weft } from './support/cli.js';

let server: Server;
let url = '';
const seen: Array<{ epoch: number; feedback: boolean }> = [];
const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-model-'));

beforeAll(async () => {
  assertBuilt();
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const user = (JSON.parse(body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')!.content;
      const epoch = Number(/Epoch: (\d+)/.exec(user)![1]);
      const feedback = user.includes('was rejected');
      seen.push({ epoch, feedback });
      const goals = [TRAVEL_GOALS.findOptions, TRAVEL_GOALS.bookTrip, TRAVEL_GOALS.shareItinerary];
      const content =
        epoch === 1 && !feedback ? 'Let me look for flights first.' : epoch <= 3 ? JSON.stringify({ goal: goals[epoch - 1] }) : JSON.stringify({ done: true, summary: 'trip booked' });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

test('a run against an OpenAI-compatible endpoint completes, records every reply, and replays without it', async () => {
  const run = await weft(['run', 'travel', '--dir', root, '--model-url', url, '--model', 'local-test', '--json']);
  expect(run.code, run.stderr).toBe(0);
  const out = JSON.parse(run.stdout) as { status: string; journal: string; publicKey: string };
  expect(out.status).toBe('completed');
  expect(seen).toEqual([
    { epoch: 1, feedback: false },
    { epoch: 1, feedback: true },
    { epoch: 2, feedback: false },
    { epoch: 3, feedback: false },
    { epoch: 4, feedback: false },
  ]);
  const log = await weft(['log', out.journal]);
  expect(log.stdout).toMatch(/model\.rejected .*not valid JSON/);
  await new Promise((resolve) => server.close(resolve));
  const replay = await weft(['replay', out.journal, '--json']);
  expect(replay.code, replay.stderr).toBe(0);
  expect(JSON.parse(replay.stdout)).toMatchObject({ status: 'completed', identical: true });
  expect((await weft(['verify', out.journal, '--public-key', out.publicKey])).code).toBe(0);
  server = createServer(); // afterAll closes whatever is there
  server.listen(0);
});

test('--model-url without --model is a usage error', async () => {
  const r = await weft(['run', 'travel', '--dir', root, '--model-url', url]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/--model-url and --model go together/);
});
