import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The repository's TypeScript compiler. */
export const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');

/** Compiler options of an app as the README sets one up (NodeNext, strict, decorators). */
export const appCompilerOptions = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  types: ['node'],
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: true,
};

/** Runs `tsc -p project` and resolves with its exit code and output. */
export function tscRun(project: string, cwd: string): Promise<{ code: number; output: string }> {
  return run(process.execPath, [tsc, '-p', project], cwd);
}

/** Runs a command, resolving with its exit code (0 or 1) and its stdout and stderr together. */
export function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) =>
    // Without NODE_TEST_CONTEXT, a `node --test` child runs its files instead of reporting to this runner.
    execFile(
      command,
      args,
      { cwd, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NODE_TEST_CONTEXT: undefined } },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, output: `${stdout}${stderr}` }),
    ),
  );
}
