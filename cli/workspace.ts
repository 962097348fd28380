/**
 * A Weft workspace on disk — the embedded default: `<dir>/` is a FileStore (journals, snapshots,
 * blobs), `<dir>/keys/` holds the signing key (created on first use, 0600), and
 * `<dir>/state/<example>/` the example's simulated providers. The CLI's run / resume / approve /
 * replay / ls commands all open a runtime this way.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { OpenAiModel } from '../actors/model/openai.js';
import { FileStore } from '../journal/stores/file.js';
import { signingKeyFromSecret, type SigningKey } from '../journal/seal.js';
import { libraryDigest } from '../htn/library/digest.js';
import { validateLibrary } from '../htn/library/validate.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { exampleForLibrary, loadExample, type Example, type ExampleHooks } from '../examples/registry.js';
import { loadSigningKey, PUBLIC_FILE, SECRET_FILE, writeKeyPair } from './keys.js';

export interface Workspace {
  dir: string;
  store: FileStore;
  example: Example;
  runtime: Runtime;
  publicKeyFile: string;
}

export const DEFAULT_DIR = '.weft';

/** The workspace's signing key, generated (and written 0600) the first time it is needed. */
export async function workspaceKey(dir: string): Promise<{ key: SigningKey; publicKeyFile: string }> {
  const keysDir = path.join(dir, 'keys');
  const secretFile = path.join(keysDir, SECRET_FILE);
  if (!existsSync(secretFile)) await writeKeyPair(keysDir, signingKeyFromSecret(randomBytes(32)));
  return { key: await loadSigningKey(secretFile), publicKeyFile: path.join(keysDir, PUBLIC_FILE) };
}

/** A real chat model instead of the example's scripted one: any OpenAI-compatible endpoint. */
export interface ModelChoice {
  baseUrl: string;
  model: string;
}

export async function openWorkspace(dirOption: string | undefined, exampleName: string, hooks?: ExampleHooks, modelChoice?: ModelChoice): Promise<Workspace> {
  const dir = path.resolve(dirOption ?? DEFAULT_DIR);
  const example = await loadExample(exampleName);
  const store = new FileStore(dir);
  const { key, publicKeyFile } = await workspaceKey(dir);
  const created = example.create(path.join(dir, 'state', example.name), hooks);
  const { app } = created;
  const model = modelChoice
    ? new OpenAiModel({ ...modelChoice, ...(process.env.WEFT_MODEL_KEY ?? process.env.OPENAI_API_KEY ? { apiKey: (process.env.WEFT_MODEL_KEY ?? process.env.OPENAI_API_KEY)! } : {}) })
    : created.model;
  const runtime = createRuntime({
    store,
    libraries: [app.library],
    actuators: app.actuators,
    observe: app.observe,
    model,
    signingKey: key,
    ...(app.policy ? { policy: app.policy } : {}),
    ...(app.evaluables ? { evaluables: app.evaluables } : {}),
  });
  return { dir, store, example, runtime, publicKeyFile };
}

/** Open the workspace an existing invocation lives in, finding its example by pinned library. */
export async function openWorkspaceFor(dirOption: string | undefined, id: string, hooks?: ExampleHooks): Promise<Workspace> {
  const dir = path.resolve(dirOption ?? DEFAULT_DIR);
  const store = new FileStore(dir);
  const first = (await store.read(id, 0, 1))[0];
  if (!first || first.kind !== 'invocation.pinned') throw new Error(`no invocation ${id} in ${dir}`);
  const example = await exampleForPin(store, (first.body as { pin: { library: string } }).pin.library);
  return openWorkspace(dir, example.name, hooks);
}

/** The example whose library the journal pinned (read from the store's blob area). */
export async function exampleForPin(store: FileStore, digest: string): Promise<Example> {
  const bytes = await store.getBlob(digest);
  if (!bytes) throw new Error(`the pinned library ${digest} is not in ${store.dir}/blobs; replay needs the store the journal came from`);
  const library = validateLibrary(JSON.parse(new TextDecoder().decode(bytes)));
  if (libraryDigest(library) !== digest) throw new Error(`blob ${digest} does not hold the library it is filed under`);
  const example = await exampleForLibrary(library.name);
  if (!example) throw new Error(`no example pins a library named ${library.name}; replay it from your own app with runtime.replay()`);
  return example;
}
