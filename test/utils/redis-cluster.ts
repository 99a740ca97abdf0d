import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REDIS_URL, redisAvailable } from './redis.js';

/** A 3-master Redis Cluster on free ports, started and stopped by a test file. */
export interface RedisClusterHandle {
  /** Seed nodes, `redis://127.0.0.1:<port>`. */
  nodes: string[];
  stop(): Promise<void>;
}

/** Where the Redis suites run: the single Redis at REDIS_URL, and a Cluster the setup starts. */
export interface RedisTarget {
  name: 'single' | 'cluster';
  /** The module's `redis` option, without keyPrefix. */
  option(): { url: string } | { cluster: { nodes: string[] } };
  /** Env for a child app (test/fixtures/scale-out.app.ts reads it). */
  env(): Record<string, string>;
  /** A plain ioredis client for assertions (Redis or Cluster). */
  client(): Promise<import('ioredis').Redis | import('ioredis').Cluster>;
}

/** Resolves when the child prints a line matching `pattern`; rejects when it exits or fails first. */
function lineFrom(child: ChildProcess, pattern: RegExp, what: string, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`${what} did not report ready in ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const done = (error?: Error): void => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    child.once('error', (error) =>
      done(
        new Error(
          `${what} could not start: ${error.message}. Install redis-server and redis-cli 7 and put them on PATH.`,
        ),
      ),
    );
    child.once('exit', (code) => done(new Error(`${what} exited with ${code} before it was ready:\n${output}`)));
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        output += `${line}\n`;
        if (pattern.test(line)) done();
      });
    }
  });
}

/** A port that is free, and whose cluster bus port (port + 10000) is free too. */
async function freePort(): Promise<number> {
  const listen = (port: number): Promise<number | undefined> =>
    new Promise((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => {
        const got = (server.address() as { port: number }).port;
        server.close(() => resolve(got));
      });
    });
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if ((await listen(port)) && (await listen(port + 10_000))) return port;
  }
}

/**
 * Starts three `redis-server --cluster-enabled yes` on free ports, joins them with
 * `redis-cli --cluster create` (no replicas), and resolves once every node reports
 * `cluster_state:ok`. A missing redis-server or redis-cli rejects: the caller fails, it does not skip.
 */
export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-redis-cluster-'));
  const servers: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(
      servers.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--cluster-node-timeout',
          '5000',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      servers.push(child);
      await lineFrom(child, /Ready to accept connections/, `redis-server on port ${port}`);
    }
    const create = spawn(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await lineFrom(create, /All 16384 slots covered/, 'redis-cli --cluster create');
    await new Promise<void>((resolve, reject) => {
      if (create.exitCode !== null)
        return create.exitCode === 0
          ? resolve()
          : reject(new Error(`redis-cli --cluster create exited with ${create.exitCode}`));
      create.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`redis-cli --cluster create exited with ${code}`)),
      );
    });
    const { Redis } = await import('ioredis');
    for (const port of ports) {
      const node = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
      try {
        const deadline = Date.now() + 60_000;
        // Polling the cluster's state: the nodes agree on the slots a moment after the create.
        while (!/cluster_state:ok/.test(String(await node.call('CLUSTER', 'INFO')))) {
          if (Date.now() > deadline)
            throw new Error(`the Redis Cluster node on port ${port} did not reach cluster_state:ok in 20 s`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        node.disconnect();
      }
    }
    return { nodes: ports.map((p) => `redis://127.0.0.1:${p}`), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A redis-server of the test's own, which it may kill and start again on the same port. */
export interface OwnRedisHandle {
  url: string;
  /** SIGKILL, as a crash; resolves once the process exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is saved). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a redis-server on a free port, for a test that must break Redis without touching the
 * shared one. A missing redis-server rejects: the caller fails, it does not skip.
 */
export async function startOwnRedis(): Promise<OwnRedisHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-redis-own-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await lineFrom(child, /Ready to accept connections/, `redis-server on port ${port}`);
  };
  const kill = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: start,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The single Redis at REDIS_URL. */
export const singleRedis: RedisTarget = {
  name: 'single',
  option: () => ({ url: REDIS_URL }),
  env: () => ({ REDIS_URL }),
  client: async () => new (await import('ioredis')).Redis(REDIS_URL),
};

/** A target on a Cluster that `startRedisCluster` started. */
export function clusterRedis(cluster: () => RedisClusterHandle): RedisTarget {
  return {
    name: 'cluster',
    option: () => ({ cluster: { nodes: cluster().nodes } }),
    env: () => ({ REDIS_CLUSTER_NODES: cluster().nodes.join(',') }),
    client: async () => new (await import('ioredis')).Cluster(cluster().nodes),
  };
}

/**
 * Whether the Redis suites can run here: the single Redis answers (under CI=true a missing one
 * throws) and redis-server is on PATH for the Cluster (under CI=true a missing one throws too).
 * Returns a skip reason, or false.
 */
export async function redisSuitesSkip(): Promise<string | false> {
  if (!(await redisAvailable())) return `no Redis at ${REDIS_URL}`;
  const found = await new Promise<boolean>((resolve) => {
    const probe = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    probe.once('error', () => resolve(false));
    probe.once('exit', (code) => resolve(code === 0));
  });
  if (!found) {
    if (process.env.CI === 'true')
      throw new Error('redis-server is not on PATH; CI needs it to start the Redis Cluster the tests run against.');
    return 'redis-server is not on PATH (needed to start a Redis Cluster)';
  }
  return false;
}

/** Every key matching a pattern, on a single Redis or on each master of a Cluster. */
export async function keysMatching(
  client: import('ioredis').Redis | import('ioredis').Cluster,
  pattern: string,
): Promise<string[]> {
  if ('nodes' in client && typeof client.nodes === 'function') {
    const lists = await Promise.all(client.nodes('master').map((node) => node.keys(pattern)));
    return lists.flat();
  }
  return (client as import('ioredis').Redis).keys(pattern);
}

/** Deletes keys one by one (a Cluster refuses a multi-key DEL across slots). */
export async function deleteKeys(
  client: import('ioredis').Redis | import('ioredis').Cluster,
  keys: string[],
): Promise<void> {
  await Promise.all(keys.map((key) => client.del(key)));
}
