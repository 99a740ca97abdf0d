import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

describe('jose, the optional peer of the built-in verification', () => {
  it('names the package and the install command when it cannot be loaded', () => {
    // A resolve hook that finds no "jose", as in an app that never installed it.
    const hook = `data:text/javascript,export async function resolve(s, c, next) { if (s === 'jose') { const e = new Error("Cannot find package 'jose'"); e.code = 'ERR_MODULE_NOT_FOUND'; throw e; } return next(s, c); }`;
    const script = `
      import { register } from 'node:module';
      register(${JSON.stringify(hook)});
      const { loadJose } = await import(${JSON.stringify(new URL('./jose.loader.js', import.meta.url).href)});
      await loadJose().then(() => console.log('loaded'), (error) => console.log(error.message));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /built-in token verification \(auth\.jwt, auth\.dpop\) needs the "jose" package[^]*Install it with "npm install jose@6"/);
  });
});
