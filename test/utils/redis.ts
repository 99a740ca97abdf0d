import { connect } from 'node:net';

/** The Redis the tests use (started before each session and by .ci/run). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether Redis answers. Under CI=true a missing Redis throws, so the run fails instead of
 * skipping; elsewhere callers skip with a reason.
 */
export async function redisAvailable(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  const up = await new Promise<boolean>((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
  if (!up && process.env.CI === 'true')
    throw new Error(`Redis is not answering at ${REDIS_URL}; CI needs it (.ci/run starts one).`);
  return up;
}

/** Deletes the keys a test wrote under its own prefix, so runs never see each other's state. */
export async function clearRedisPrefix(prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_URL);
  try {
    // The module keeps a prefix without a hash tag as `{<prefix>}`; keys written by hand keep it bare.
    const keys = [...(await redis.keys(`${prefix}*`)), ...(await redis.keys(`{${prefix}}*`))];
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
