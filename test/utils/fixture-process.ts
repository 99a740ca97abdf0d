/**
 * One app process of test/fixtures/scale-out.app.ts, for the specs that kill, signal or feed a
 * real instance (faults, shutdown). It waits for the fixture's `{"port":N}` line, never for time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { GUARDED_NODE_ARGS } from './child-guard.js';
import { endProcess, guard } from './wait.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/scale-out.app.js', import.meta.url));

export class FixtureInstance {
  url = '';
  stderr = '';
  child?: ChildProcess;

  /** `env` adds to the fixture's environment (REDIS_URL, MCP_KEY_PREFIX, ...); `stdin: 'pipe'` to write to it. */
  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    private readonly stdin: 'ignore' | 'pipe' = 'ignore',
    /** The compiled fixture app to run; it prints `{"port":N}` once listening. */
    private readonly fixture: string = FIXTURE,
  ) {}

  /** Every JSON line the fixture prints, for subclasses that follow more than the port. */
  protected onMessage(_message: Record<string, unknown>): void {}

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, ['--enable-source-maps', ...GUARDED_NODE_ARGS, this.fixture], {
      env: { ...process.env, ...this.env, INSTANCE: this.name, PORT: '0' },
      stdio: [this.stdin, 'pipe', 'pipe'],
    });
    this.child = child;
    child.stderr!.on('data', (chunk) => (this.stderr += String(chunk)));
    const lines = createInterface({ input: child.stdout! });
    const port = await guard(
      new Promise<number>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`instance ${this.name} exited with ${code}:\n${this.stderr}`)));
        lines.on('line', (line) => {
          let message: Record<string, unknown>;
          try {
            message = JSON.parse(line) as Record<string, unknown>;
          } catch {
            return; // not a fixture line
          }
          if (typeof message.port === 'number') resolve(message.port);
          this.onMessage(message);
        });
      }),
      `instance ${this.name} listening`,
      // Generous: a loaded machine compiles and boots a Nest app slowly; only a failure guard.
      90_000,
    );
    this.url = `http://127.0.0.1:${port}/mcp`;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.alive) await endProcess(this.child, signal);
  }
}
