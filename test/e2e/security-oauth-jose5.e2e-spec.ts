/**
 * The peer range is `jose@^5.9.0 || ^6.0.0`: a CommonJS app tested with Jest needs jose 5 (jose 6
 * is ES modules only, which Jest's CommonJS loader cannot load). This runs the whole attacker's-side
 * spec of the built-in verification (security-oauth: JWT, JWKS bound, introspection, DPoP and its
 * replay store, both eras) again with the library resolving "jose" to jose 5 (the `jose5`
 * devDependency), while the spec, oidc-provider and the clients keep jose 6: every refusal and
 * every accepted token has to come out the same on both majors.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { GUARDED_NODE_ARGS } from '../utils/child-guard.js';

// Only imports made by the library's build (dist/lib) are redirected; the hook says each time it did.
const HOOK = `data:text/javascript,export async function resolve(s, c, next) { if (s === 'jose' && c.parentURL && c.parentURL.includes('/dist/lib/')) { const r = await next('jose5', c); console.error('[jose5] ' + r.url); return r; } return next(s, c); }`;
const REGISTER = `data:text/javascript,import { register } from 'node:module'; register(${JSON.stringify(HOOK)});`;

describe('the built-in verification on jose 5', () => {
  it('passes the whole security-oauth spec with the library on jose 5', { timeout: 600_000 }, async () => {
    const spec = fileURLToPath(new URL('./security-oauth.e2e-spec.js', import.meta.url));
    const child = spawn(
      process.execPath,
      [
        '--enable-source-maps',
        ...GUARDED_NODE_ARGS,
        '--import',
        REGISTER,
        '--test',
        '--test-concurrency=1',
        '--test-timeout=300000',
        spec,
      ],
      // Without the runner's NODE_TEST_CONTEXT, which makes a nested runner skip its files.
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_TEST_CONTEXT')),
      },
    );
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    assert.equal(code, 0, output);
    assert.match(
      output,
      /\[jose5\] \S+\/node_modules\/jose5\/dist\/node\/esm\/index\.js/,
      'the library did not load jose 5',
    );
    const passed = Number(/^# pass (\d+)$/m.exec(output)?.[1]);
    assert.ok(passed >= 30, `expected the whole spec to run and pass, got:\n${output.slice(-2000)}`);
    assert.match(output, /^# fail 0$/m);
    assert.match(output, /^# skipped 0$/m);
  });
});
