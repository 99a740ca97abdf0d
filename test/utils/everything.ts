/**
 * The official reference server `@modelcontextprotocol/server-everything` (a devDependency) as an
 * upstream: its stdio command, or a Streamable HTTP child on a free port, ready once it says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort } from './redis-server.js';
import { endProcess, guard } from './wait.js';

/** The server's entry script: `node <it> stdio` or `node <it> streamableHttp`. */
export const EVERYTHING_ENTRY = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

/** The stdio transport options of McpClientModule for the reference server. */
export function everythingStdio(): { type: 'stdio'; command: string; args: string[]; stderr: 'ignore' } {
  return { type: 'stdio', command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], stderr: 'ignore' };
}

/** The reference server over Streamable HTTP, on a port of its own (fixed across restarts). */
export class EverythingHttp {
  private child?: ChildProcess;
  stderr = '';

  private constructor(readonly port: number) {}

  static async start(): Promise<EverythingHttp> {
    const server = new EverythingHttp(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** (Re)starts the server on its port; resolves once it listens. */
  async start(): Promise<void> {
    const child = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], {
      env: { ...process.env, PORT: String(this.port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    await guard(
      new Promise<void>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}:\n${this.stderr}`)));
        child.stderr!.on('data', (chunk) => {
          this.stderr += String(chunk);
          if (this.stderr.includes('listening on port')) resolve();
        });
      }),
      'server-everything listening over Streamable HTTP',
    );
  }

  async stop(): Promise<void> {
    await endProcess(this.child);
  }
}
