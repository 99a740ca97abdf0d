import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import { checkState, SessionHooks, type McpSessionConnection } from './session-hooks.js';

const connection: McpSessionConnection = {
  era: 'legacy',
  sessionId: 's',
  protocolVersion: '2025-11-25',
  capabilities: {},
  header: () => undefined,
};

function logged(): { errors: string[]; logger: { error(message: string): void } } {
  const errors: string[] = [];
  return { errors, logger: { error: (message) => void errors.push(message) } };
}

describe('SessionHooks', () => {
  it('seeds a copy of what the hook returns, and an empty state for nothing', async () => {
    const seed = { cart: ['a'] };
    const hooks = new SessionHooks({ onSession: () => seed, stateBytes: 1024 });
    const state = await hooks.open(connection);
    assert.deepEqual(state, { cart: ['a'] });
    seed.cart.push('b');
    assert.deepEqual(state, { cart: ['a'] }, 'later edits of the hook object change nothing stored');
    assert.deepEqual(await new SessionHooks({ onSession: () => undefined, stateBytes: 1024 }).open(connection), {});
  });

  it('passes an McpError through, and turns any other failure into an internal error that names the hook', async () => {
    const refusal = new McpError(-32001, 'Forbidden', undefined, 403);
    await assert.rejects(
      new SessionHooks({ onSession: () => Promise.reject(refusal), stateBytes: 1024 }).open(connection),
      (e) => e === refusal,
    );
    const { errors, logger } = logged();
    await assert.rejects(
      new SessionHooks({
        onSession: () => {
          throw new Error('db down');
        },
        stateBytes: 1024,
        logger,
      }).open(connection),
      (e: McpError) =>
        e.code === ErrorCode.InternalError &&
        /sessions\.onSession hook failed/.test(e.message) &&
        !/db down/.test(e.message),
    );
    assert.match(errors[0], /db down/, 'the reason goes to the log, not to the client');
  });

  it('refuses a state that is not a JSON object or is over the bound', async () => {
    const over = new SessionHooks({ onSession: () => ({ big: 'x'.repeat(100) }), stateBytes: 64 });
    await assert.rejects(over.open(connection), /over the 64-byte limit \(limits\.sessionStateBytes\)/);
    const array = new SessionHooks({ onSession: () => [1] as never, stateBytes: 64 });
    await assert.rejects(array.open(connection), /plain object/);
    assert.throws(() => checkState({ n: 1n }, 64, 'ctx.state() was given'), /not JSON/);
  });

  it('logs a failing close hook, sync or async, and never throws', async () => {
    const errors: string[] = [];
    let both!: () => void;
    const logged = new Promise<void>((resolve) => (both = resolve));
    const logger = { error: (message: string) => void (errors.push(message) === 2 && both()) };
    new SessionHooks({
      onSessionClose: () => {
        throw new Error('sync');
      },
      stateBytes: 64,
      logger,
    }).closed({ sessionId: 's', reason: 'deleted' });
    new SessionHooks({ onSessionClose: () => Promise.reject(new Error('async')), stateBytes: 64, logger }).closed({
      sessionId: 's',
      reason: 'expired',
    });
    await logged;
    assert.match(errors[0], /"deleted".*sync/);
    assert.match(errors[1], /"expired".*async/);
  });
});
