/**
 * The OpenAI-compatible adapter against a real local HTTP server that speaks the chat-completions
 * protocol: a good reply, a 500 then recovery, a hang past the timeout, malformed JSON bodies, a
 * 4xx refusal, and a reply whose content is not JSON (returned verbatim for the validator).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { OpenAiModel } from '../actors/model/openai.js';
import { ModelEnvelopeError, ModelRequestError, ModelUnavailableError, type ModelRequest } from '../actors/model/model.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server;
let baseUrl: string;
let script: Handler[] = [];
let received: Array<{ url: string; auth: string | undefined; body: any }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(body) });
      const next = script.shift();
      if (!next) {
        res.writeHead(500).end('no scripted response');
        return;
      }
      next(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  script = [];
  received = [];
});

const reply = (content: string): Handler => (_req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));

const request: ModelRequest = {
  purpose: 'parse',
  intent: 'Take me to Lisbon on the 12th',
  epoch: 0,
  outcomes: [],
  tasks: [{ name: 'travel', params: [{ name: 'city', type: 'city' }] }],
};

const model = (extra: Partial<ConstructorParameters<typeof OpenAiModel>[0]> = {}) =>
  new OpenAiModel({ baseUrl, model: 'test-model', apiKey: 'sk-test', timeoutMs: 300, backoffMs: 1, ...extra });

describe('OpenAI-compatible adapter', () => {
  test('sends a chat-completions request asking for JSON and returns the content', async () => {
    script.push(reply('{"goal":{"task":"travel","args":["lisbon"]}}'));
    const out = await model().complete(request);
    expect(out.text).toBe('{"goal":{"task":"travel","args":["lisbon"]}}');
    expect(received).toHaveLength(1);
    expect(received[0]!.url).toBe('/v1/chat/completions');
    expect(received[0]!.auth).toBe('Bearer sk-test');
    expect(received[0]!.body.model).toBe('test-model');
    expect(received[0]!.body.response_format).toEqual({ type: 'json_object' });
    expect(received[0]!.body.messages[0].content).toContain('travel(city: city)');
    expect(received[0]!.body.messages[1].content).toContain('Take me to Lisbon');
  });

  test('a 500 is transient: one attempt by default (the runtime owns retries), and retried when asked', async () => {
    script.push((_q, res) => res.writeHead(500).end('boom'));
    await expect(model().complete(request)).rejects.toThrow(ModelUnavailableError);
    expect(received).toHaveLength(1);
    received.length = 0;
    script.push((_q, res) => res.writeHead(500).end('boom'), reply('{"done":true,"summary":"ok"}'));
    const out = await model({ maxAttempts: 2 }).complete(request);
    expect(out.text).toBe('{"done":true,"summary":"ok"}');
    expect(received).toHaveLength(2);
  });

  test('a hang past the timeout is retried, then reported as unavailable', async () => {
    const hang: Handler = () => undefined; // never answers
    script.push(hang, hang);
    const started = performance.now();
    await expect(model({ maxAttempts: 2, timeoutMs: 150 }).complete(request)).rejects.toThrow(ModelUnavailableError);
    expect(received).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });

  test('a 2xx body that is not a chat completion (cut off, HTML, empty) is an endpoint problem, not retried', async () => {
    for (const body of ['{"choices": [ oops', '<html>', '', '{"choices":[]}']) {
      received.length = 0;
      script.push((_q, res) => res.writeHead(200).end(body));
      const err = await model({ maxAttempts: 3 }).complete(request).catch((e) => e);
      expect(err).toBeInstanceOf(ModelEnvelopeError);
      expect(err.message).toMatch(/chat-completions|not JSON|empty|choices/);
      expect(received).toHaveLength(1);
    }
  });

  test('reply content that is not JSON is returned verbatim for the validator to reject', async () => {
    script.push(reply('Sure! I will book Lisbon for you.'));
    const out = await model().complete(request);
    expect(out.text).toBe('Sure! I will book Lisbon for you.');
  });

  test('a 401 is a permanent refusal and is not retried', async () => {
    script.push((_q, res) => res.writeHead(401).end('{"error":"bad key"}'));
    await expect(model().complete(request)).rejects.toThrow(ModelRequestError);
    expect(received).toHaveLength(1);
  });

  test('feedback from a rejected reply is sent back on the re-prompt', async () => {
    script.push(reply('{"done":true,"summary":"x"}'));
    await model().complete({ ...request, feedback: 'unknown task "fly"' });
    expect(received[0]!.body.messages[1].content).toContain('rejected: unknown task "fly"');
  });
});
