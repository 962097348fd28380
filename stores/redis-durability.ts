/**
 * Whether a Redis server keeps what it acknowledges. A journal store's promise is that an
 * acknowledged append survives a crash; Redis keeps that promise only when it writes every command
 * to its append-only file and fsyncs it before replying, and never evicts keys to make room:
 *
 *   appendonly yes            otherwise a restart loses everything since the last RDB save
 *   appendfsync always        otherwise a crash loses up to a second (everysec) or more (no)
 *   maxmemory-policy noeviction   otherwise a full server silently drops journals
 *
 * `checkRedisDurability` reads those settings (CONFIG GET); `RedisStore.open` refuses a server
 * that fails it unless the caller accepts the risk (`durability: 'relaxed'`).
 */
import type { Redis } from 'ioredis';
import { WeftError } from '../journal/errors.js';
import { connectRefusal, isAccessRefused } from './access-refused.js';

/** `refused`: the server refused this user CONFIG GET (NOPERM) — a permission to grant, not a setting to fix. */
export type DurabilityVerdict = { ok: true } | { ok: false; problems: string[]; refused?: Error };

/** The server would lose acknowledged journal records (see checkRedisDurability). */
export class RedisDurabilityError extends WeftError {
  constructor(
    readonly store: string,
    readonly problems: readonly string[],
  ) {
    super(
      'store.durability',
      'permanent',
      `Redis at ${store} may lose acknowledged journal records: ${problems.join('; ')}. ` +
        `Fix the server's settings, or pass durability: 'relaxed' (--redis-durability relaxed) to accept the risk`,
    );
  }
}

/**
 * What a strict open throws for a verdict that is not ok: StoreAuthRefusedError when this user may
 * not read the settings (an ACL to fix, not the server's settings), else RedisDurabilityError.
 */
export function durabilityRefusal(store: string, verdict: Extract<DurabilityVerdict, { ok: false }>): WeftError {
  return verdict.refused ? connectRefusal(store, verdict.refused, 'config|get') : new RedisDurabilityError(store, verdict.problems);
}

/** The warning `durability: 'relaxed'` gives instead of refusing. */
export function relaxedDurabilityWarning(store: string, problems: readonly string[]): string {
  return `Redis at ${store} may lose acknowledged journal records (durability: 'relaxed' accepts the risk): ${problems.join('; ')}`;
}

/** Checks appendonly, appendfsync and maxmemory-policy; a server whose CONFIG cannot be read is not ok. */
export async function checkRedisDurability(client: Redis): Promise<DurabilityVerdict> {
  let settings: Map<string, string>;
  try {
    settings = new Map();
    for (const name of ['appendonly', 'appendfsync', 'maxmemory-policy']) {
      const reply = await client.call('CONFIG', 'GET', name);
      if (!Array.isArray(reply)) throw new Error(`CONFIG GET ${name} replied ${JSON.stringify(reply)}`);
      for (let i = 0; i + 1 < reply.length; i += 2) settings.set(String(reply[i]).toLowerCase(), String(reply[i + 1]).toLowerCase());
    }
  } catch (err) {
    if (isAccessRefused(err)) return { ok: false, problems: [`cannot read the server's settings: ${err.message.split('\n')[0]}`], refused: err };
    return { ok: false, problems: [`cannot read the server's settings (CONFIG is disabled?): ${(err as Error)?.message ?? String(err)}`] };
  }
  const problems: string[] = [];
  const appendonly = settings.get('appendonly');
  if (appendonly !== 'yes') problems.push(`appendonly is ${appendonly ?? 'unknown'}: an acknowledged append is lost when Redis restarts; set appendonly yes`);
  const appendfsync = settings.get('appendfsync');
  if (appendfsync === 'everysec') {
    problems.push('appendfsync is everysec: up to a second of acknowledged appends is lost on a crash; set appendfsync always');
  } else if (appendfsync !== 'always') {
    problems.push(`appendfsync is ${appendfsync ?? 'unknown'}: acknowledged appends the OS has not flushed yet (often 30 seconds of them) are lost on a crash; set appendfsync always`);
  }
  const policy = settings.get('maxmemory-policy');
  if (policy !== 'noeviction') problems.push(`maxmemory-policy is ${policy ?? 'unknown'}: journals may be evicted; set maxmemory-policy noeviction`);
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}
