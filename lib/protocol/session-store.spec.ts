import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemorySessionStore, newSessionId, type McpSession } from './session-store.js';

const session = (id: string): McpSession => ({ id, protocolVersion: '2025-11-25', capabilities: {} });

describe('InMemorySessionStore', () => {
  it('at capacity drops expired sessions first, then refuses instead of evicting', () => {
    let now = 0;
    const store = new InMemorySessionStore({ idleTtlMs: 1000, maxSessions: 2, now: () => now });
    store.create(session('a'));
    now = 500;
    store.create(session('b'));
    assert.deepEqual(store.create(session('c')), { created: false, reason: 'capacity' });
    assert.ok(store.get('a'));
    assert.ok(store.get('b'));
    now = 2000;
    assert.deepEqual(store.create(session('d')), { created: true });
    assert.equal(store.get('a'), undefined);
    store.close();
  });

  it("ends the owner's own least recently used session beyond its cap, never another owner's", () => {
    const ended: string[] = [];
    const store = new InMemorySessionStore({ idleTtlMs: 60_000, maxSessions: 10 });
    store.onSessionEnd((id, reason) => ended.push(`${id}:${reason}`));
    const owned = (id: string, owner: string): McpSession => ({ ...session(id), owner });
    store.create(owned('other', 'address:1'), { maxPerOwner: 2 });
    store.create(owned('a', 'address:2'), { maxPerOwner: 2 });
    store.create(owned('b', 'address:2'), { maxPerOwner: 2 });
    store.get('a');
    store.create(owned('c', 'address:2'), { maxPerOwner: 2 });
    assert.deepEqual(ended, ['b:evicted']);
    assert.ok(store.get('other'));
    assert.ok(store.get('a'));
    assert.ok(store.get('c'));
    store.close();
  });

  it('expires idle sessions', () => {
    // A controlled clock: the test moves time instead of waiting for it.
    let now = 1_000_000;
    const ended: string[] = [];
    const store = new InMemorySessionStore({ idleTtlMs: 20, maxSessions: 10, now: () => now });
    store.onSessionEnd((id, reason) => ended.push(`${id}:${reason}`));
    store.create(session('x'));
    store.create(session('y'));
    now += 19;
    assert.ok(store.get('x'), 'still alive 1 ms before its idle timeout');
    now += 19;
    assert.ok(store.get('x'), 'reading it refreshed its idle timer');
    assert.equal(store.get('y'), undefined, 'y was not read for 38 ms');
    now += 20;
    assert.equal(store.get('x'), undefined, 'expired exactly at its idle timeout');
    assert.deepEqual(ended.sort(), ['x:expired', 'y:expired']);
    store.close();
  });

  it('mints unguessable visible-ASCII ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, newSessionId));
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.match(id, /^[\x21-\x7e]{22}$/);
  });
});
