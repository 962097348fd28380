/**
 * What a bench report says of the Redis server it ran against, read from the server itself (INFO and
 * CONFIG GET): its CPU so far, and its version and append-only settings.
 */
import type { Redis } from 'ioredis';

/** The server's own CPU so far (user + system, ms), from INFO cpu. */
export async function serverCpuMs(client: Redis): Promise<number> {
  const text = await client.info('cpu');
  const get = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(text)?.[1] ?? 0);
  return (get('used_cpu_sys') + get('used_cpu_user')) * 1000;
}

/** The server's version and AOF settings, for the report. */
export async function aofSettings(client: Redis): Promise<string> {
  try {
    const reply = (await client.call('CONFIG', 'GET', 'append*')) as string[];
    const conf = new Map<string, string>();
    for (let i = 0; i + 1 < reply.length; i += 2) conf.set(reply[i]!, reply[i + 1]!);
    const version = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? '?';
    return `redis ${version}: appendonly ${conf.get('appendonly') ?? '?'}, appendfsync ${conf.get('appendfsync') ?? '?'}`;
  } catch (err) {
    return `CONFIG GET refused (${(err as Error).message}): AOF settings unknown`;
  }
}
