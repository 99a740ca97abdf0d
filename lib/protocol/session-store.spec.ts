import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemorySessionStore, newSessionId, type McpSession } from './session-store.js';

const session = (id: string): McpSession => ({ id, protocolVersion: '2025-11-25', capabilities: {} });

describe('InMemorySessionStore', () => {
  it('evicts the least recently used session at capacity', () => {
    const evicted: string[] = [];
    const store = new InMemorySessionStore({ idleTtlMs: 60_000, maxSessions: 2, onEvict: (s) => evicted.push(s.id) });
    store.create(session('a'));
    store.create(session('b'));
    store.get('a');
    store.create(session('c'));
    assert.deepEqual(evicted, ['b']);
    assert.ok(store.get('a'));
    assert.equal(store.get('b'), undefined);
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
