/**
 * What `createClient(options)` takes, and what it makes of it. A client pins what it starts exactly
 * as a runtime with the same options would (runtime/start.ts), so it takes the options that decide
 * a pin — the domain or the libraries, the model (its id and parameters; never called), the policy,
 * the limits, the public half of the key that will seal — and the store. It runs nothing: a domain's
 * actuators are read only for what they declare (which spend, which give a shadow result), so a
 * domain that builds them per state folder needs `stateDir` as a runtime does; none is ever run, and
 * no model endpoint is reached.
 */
import type { Redis as RedisClient } from 'ioredis';
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import type { PublicKey } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import type { Library } from '../htn/library/schema.js';
import type { InvocationLimits } from '../machines/context.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { RedisStore } from '../stores/redis.js';
import type { CoreOptions } from '../runtime/client-core.js';
import { isDomain, type Domain, type DomainContext } from '../runtime/domain.js';
import { RuntimeUsageError } from '../runtime/errors.js';

export interface ClientOptions {
  /** Where journals, snapshots, inboxes and blobs live — the store the executors (`weft serve`, a runtime) read. */
  store?: JournalStore;
  /** Or a Redis URL or ioredis client (prefix `redisPrefix`, default `weft`), as createRuntime takes it; its durability is checked before the first write. */
  redis?: string | RedisClient;
  redisPrefix?: string;
  redisGiveUpMs?: number;
  durability?: 'strict' | 'relaxed';
  /** Scope the client to one tenant: it starts, approves, cancels, lists and describes only that tenant's invocations (another's id is unknown). */
  tenant?: string;
  /** The domain whose invocations it starts: its libraries, policy, model (pinned by id), redaction marks and `asOf`. */
  domain?: Domain;
  /** Where the domain's factories keep local state, when they need one to be built (read for their declarations only). */
  stateDir?: string;
  libraries?: readonly Library[];
  /** Actuators read for what they declare (which spend, which give a shadow result); never run. */
  actuators?: readonly Actuator[];
  /** The model the executor will run with: pinned by its id and parameters, never called here. */
  model?: Model;
  policy?: AdmissionPolicy;
  /** The key the executor will seal with: its id is recorded at start and its public half filed. The public half is enough (loadPublicKey). */
  signingKey?: PublicKey;
  limits?: Partial<InvocationLimits>;
  /** Identifies this process in the lease a start holds while it writes the pin. */
  writer?: string;
  /** Wall clock for envelopes and inbox messages only (never hashed). */
  now?: () => Date;
}

/** The core's options from the client's: the domain's parts filled in where the options leave them out (explicit options win). */
export function resolveClientOptions(options: ClientOptions): { core: CoreOptions; ownsStore: boolean } {
  if (typeof options !== 'object' || options === null) throw new RuntimeUsageError('client.bad_options', 'createClient needs an options object { store | redis, domain | libraries, ... }');
  const domain = options.domain;
  if (domain !== undefined && !isDomain(domain)) throw new RuntimeUsageError('runtime.not_a_domain', 'createClient({ domain }) needs a value made by defineDomain()');
  const libraries = options.libraries ?? domain?.libraries;
  if (!libraries) throw new RuntimeUsageError('runtime.no_library', 'createClient needs a domain or at least one method library: what it starts is pinned to one');
  const prefix = options.redisPrefix ?? 'weft';
  const store = options.store ?? (options.redis !== undefined ? new RedisStore({ redis: options.redis, prefix, giveUpAfterMs: options.redisGiveUpMs }) : undefined);
  if (!store) throw new RuntimeUsageError('runtime.no_store', 'createClient needs a store (new FileStore(dir), new MemoryStore()) or redis (a URL or an ioredis client): the one its executors read');
  if (options.tenant !== undefined && (typeof options.tenant !== 'string' || options.tenant.length === 0)) throw new RuntimeUsageError('runtime.bad_tenant', `createClient: tenant must be a non-empty string, got ${JSON.stringify(options.tenant)}`);
  const context: DomainContext = {
    get stateDir(): string {
      if (options.stateDir === undefined) throw new RuntimeUsageError('runtime.no_state_dir', `domain ${domain!.name} builds its actuators or model per state folder: pass createClient({ stateDir }) — they are read for what they declare, never run`);
      return options.stateDir;
    },
    ...(typeof options.redis === 'string' ? { redis: { url: options.redis, prefix } } : {}),
  };
  // As createRuntime does (runtime-options.ts resolveDomain), so the pin is the one a runtime would write.
  const actuators = options.actuators ?? domain?.actuators(context);
  const model = options.model ?? domain?.model(context);
  const policy = options.policy ?? domain?.policy;
  return {
    ownsStore: options.store === undefined,
    core: {
      store,
      libraries,
      ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
      ...(domain ? { domain } : {}),
      ...(actuators ? { actuators } : {}),
      ...(model ? { model } : {}),
      ...(policy ? { policy } : {}),
      ...(options.signingKey ? { signingKey: { keyId: options.signingKey.keyId, publicKey: options.signingKey.publicKey } } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.durability ? { durability: options.durability } : {}),
      ...(options.writer ? { writer: options.writer } : {}),
      ...(options.now ? { now: options.now } : {}),
    },
  };
}
