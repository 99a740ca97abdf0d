import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

const PREFIX = /built-in token verification \(auth\.jwt, auth\.dpop\) needs the "jose" package/;

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
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, PREFIX);
    assert.match(
      child.stdout,
      /Cannot find package 'jose'[^]*Install it with "npm install jose@6" \(a CommonJS app whose tests run under Jest: "npm install jose@5"/,
    );
  });

  it('tells a CommonJS app whose loader cannot read ES modules to install jose 5', () => {
    // The CommonJS build under a loader without require() of ES modules, as Jest's is: the
    // devDependency jose 6 is installed but ES modules only.
    const cjsLoader = new URL('../../cjs/oauth/jose.loader.js', import.meta.url).pathname;
    const script = `require(${JSON.stringify(cjsLoader)}).loadJose().then(() => console.log('loaded'), (error) => console.log(error.message));`;
    const child = spawnSync(process.execPath, ['--no-experimental-require-module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, PREFIX);
    assert.match(
      child.stdout,
      /The installed jose is ES modules only \(jose 6\)[^]*install jose 5, which ships a CommonJS build, with "npm install jose@5"/,
    );
  });
});
