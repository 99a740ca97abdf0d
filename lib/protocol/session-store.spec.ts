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

  it('expires idle sessions', async () => {
    const store = new InMemorySessionStore({ idleTtlMs: 20, maxSessions: 10 });
    store.create(session('x'));
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(store.get('x'), undefined);
    store.close();
  });

  it('mints unguessable visible-ASCII ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, newSessionId));
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.match(id, /^[\x21-\x7e]{22}$/);
  });
});
