/**
 * Node options for the processes tests start (fixture apps, samples): they load the test setup
 * (scripts/test-setup.mjs), so an unhandled rejection or uncaught exception that kills one fails
 * the test that was running, naming the error, instead of showing only as a refused connection
 * or not at all.
 */
import { fileURLToPath } from 'node:url';

const SETUP = fileURLToPath(new URL('../../../scripts/test-setup.mjs', import.meta.url));

/** Put before the script: `spawn(process.execPath, [...GUARDED_NODE_ARGS, script])`. */
export const GUARDED_NODE_ARGS: readonly string[] = ['--import', SETUP];

/**
 * The variables that tell a guarded child where to report its death, for spawners that do not
 * pass the test process's environment on (the SDKs' stdio transports keep only a few variables).
 */
export function guardedChildEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['MCP_TEST_CRASH_DIR', 'MCP_TEST_FILE_PID'])
    if (process.env[name] !== undefined) env[name] = process.env[name]!;
  return env;
}
