/**
 * A redis-server of a test's own, on a free port and its own directory, for the specs that stop,
 * kill or pause Redis (never the shared one at REDIS_URL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { endProcess, guard } from './wait.js';

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export class RedisChild {
  readonly dir = mkdtempSync(join(tmpdir(), 'mcp-redis-child-'));
  private child?: ChildProcess;
  stderr = '';

  constructor(readonly port: number) {}

  /** A redis-server on a free port, started. */
  static async start(): Promise<RedisChild> {
    const redis = new RedisChild(await freePort());
    await redis.start();
    return redis;
  }

  /** A server on a free port, not started yet. */
  static async onFreePort(): Promise<RedisChild> {
    return new RedisChild(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    child.stderr!.on('data', (chunk) => (this.stderr += String(chunk)));
    const lines = createInterface({ input: child.stdout! });
    await guard(
      new Promise<void>((resolve, reject) => {
        child.once('error', (error) =>
          reject(
            new Error(`redis-server could not start: ${error.message}. Install redis-server 7 and put it on PATH.`),
          ),
        );
        child.once('exit', (code) =>
          reject(new Error(`redis-server on ${this.port} exited with ${code}: ${this.stderr}`)),
        );
        lines.on('line', (line) => {
          if (line.includes('Ready to accept connections')) resolve();
        });
      }),
      `redis-server on port ${this.port} ready`,
    );
  }

  /** SIGKILL, as a crash: resolves once the process exited. */
  async kill(): Promise<void> {
    await endProcess(this.child, 'SIGKILL');
  }

  /** SIGSTOP: Redis holds every connection open and answers nothing (a hung Redis), until {@link resume}. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
