// Loaded by scripts/test.mjs (`--import`) into every test file's process, and by the test helpers
// into the Node processes tests start (fixture apps, samples): an unhandled rejection or uncaught
// exception fails the run and is named, wherever it happens.
//
// - In a test file's process, Node's runner already fails the test a rejection happens in (or
//   the file, when it comes after its test ended); this adds the stack on stderr and a failing
//   exit code even where the runner only warns.
// - A child process started with `--import` of this file (see test/utils/child-guard.ts) writes
//   what killed it to the directory in MCP_TEST_CRASH_DIR, then exits 1 as Node itself would. The
//   test file's process checks that directory after every test, so the test that was running
//   when a child died of it fails, naming the child and the error; a report left at exit fails
//   the file.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'node:test';

const DIR_ENV = 'MCP_TEST_CRASH_DIR';
const OWNER_ENV = 'MCP_TEST_FILE_PID';

const describe = (error) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

if (process.execArgv.includes('--test')) {
  // The runner's parent process: it runs no test code; each file's process loads this itself.
} else if (process.env[OWNER_ENV] === undefined) {
  testFileProcess();
} else {
  childProcess();
}

function testFileProcess() {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-test-crashes-'));
  process.env[DIR_ENV] = dir;
  process.env[OWNER_ENV] = String(process.pid);
  const escaped = [];
  const record = (kind) => (error) => {
    const text = `${kind} in the test process (pid ${process.pid}): ${describe(error)}`;
    escaped.push(text);
    process.stderr.write(`\n[test-setup] ${text}\n`);
  };
  process.on('unhandledRejection', record('Unhandled rejection'));
  process.on('uncaughtException', record('Uncaught exception'));
  const seen = new Set();
  const childReports = () => {
    let names;
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    const fresh = names.filter((name) => !seen.has(name)).sort();
    for (const name of fresh) seen.add(name);
    return fresh.map((name) => readFileSync(join(dir, name), 'utf8'));
  };
  afterEach(() => {
    const reports = childReports();
    if (reports.length > 0)
      throw new Error(`A process this test started died of an unhandled error:\n${reports.join('\n')}`);
  });
  process.on('exit', () => {
    const late = childReports();
    for (const report of late) process.stderr.write(`\n[test-setup] After the last test: ${report}\n`);
    if (late.length > 0 || escaped.length > 0) process.exitCode = 1;
    rmSync(dir, { recursive: true, force: true });
  });
}

function childProcess() {
  const dir = process.env[DIR_ENV];
  const die = (kind) => (error) => {
    const text = `${kind} in child process ${process.pid} (${process.argv.slice(1).join(' ')}): ${describe(error)}`;
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${Date.now()}-${process.pid}.txt`), text);
    } catch {
      // The test process is gone (its directory with it): stderr is all that is left.
    }
    process.stderr.write(`\n[test-setup] ${text}\n`);
    process.exit(1);
  };
  process.on('unhandledRejection', die('Unhandled rejection'));
  process.on('uncaughtException', die('Uncaught exception'));
}
