import assert from 'node:assert/strict';
import {
  clusterRedis,
  deleteKeys,
  keysMatching,
  redisSuitesSkip,
  singleRedis,
  startRedisCluster,
  type RedisClusterHandle,
} from '../../test/utils/redis-cluster.js';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { McpHealthIndicator } from '../health/mcp-health.indicator.js';
import type { McpChangeEvent } from '../protocol/notification-bus.js';
import type { McpRelayStreamRequest } from '../engine/relay.js';
import { McpRedisBackend } from './redis-backend.js';
import { redisOptionProblems } from './redis-client.js';
import { newStreamId, parseEventId } from './redis-event.store.js';
import { NodeResponseSink } from '../transport/node-sink.js';
import { ownerTag } from './redis-session.store.js';
import { nextEvent } from '../../test/utils/wait.js';
import { EventEmitter } from 'node:events';

const skip = await redisSuitesSkip();
// The same suites run on the single Redis and on a 3-master Cluster this file starts.
let cluster: RedisClusterHandle | undefined;
if (!skip) cluster = await startRedisCluster();
after(() => cluster?.stop());
const targets = [singleRedis, clusterRedis(() => cluster!)];

type Json = Record<string, any>;
type Ioredis = Parameters<typeof keysMatching>[0];

/** Deletes what a suite wrote under its (tagged) prefix, on one Redis or every Cluster master. */
async function clearPrefix(backend: McpRedisBackend): Promise<void> {
  const client = backend.client as unknown as Ioredis;
  await deleteKeys(client, await keysMatching(client, `${backend.keys.prefix}*`));
}

for (const target of targets) {
  describe(`Redis stores (${target.name})`, { skip }, () => {
    const prefix = `mcp-test:${randomBytes(6).toString('hex')}:`;
    /** The prefix as the keys carry it: wrapped in a hash tag. */
    const P = `{${prefix}}`;
    // The channels the module's packs name (tasks), as McpModule passes them.
    const settings = { name: 'spec', idleTtlMs: 60_000, maxSessions: 3, sharedStateSecret: true, channels: ['tasks'] };
    let a: McpRedisBackend;
    let b: McpRedisBackend;

    before(async () => {
      a = await McpRedisBackend.connect({ ...target.option(), keyPrefix: prefix, maxEventsPerStream: 50 }, settings);
      b = await McpRedisBackend.connect({ ...target.option(), keyPrefix: prefix, maxEventsPerStream: 50 }, settings);
    });

    after(async () => {
      await clearPrefix(a);
      await a.close();
      await b.close();
    });

    it('shares one requestState secret between instances', () => {
      assert.ok(a.stateSecret && a.stateSecret.length === 32);
      assert.deepEqual(a.stateSecret, b.stateSecret);
    });

    it('keeps sessions with an idle TTL, shared between instances', async () => {
      await a.sessions.create({ id: 's1', protocolVersion: '2025-11-25', capabilities: { roots: {} } });
      assert.deepEqual(await b.sessions.get('s1'), {
        id: 's1',
        protocolVersion: '2025-11-25',
        capabilities: { roots: {} },
      });
      const ttl = (await a.client.call('PTTL', `${P}session:s1`)) as number;
      assert.ok(ttl > 50_000 && ttl <= 60_000, `ttl ${ttl}`);
      await b.sessions.update({ id: 's1', protocolVersion: '2025-11-25', capabilities: {}, logLevel: 'error' });
      assert.equal((await a.sessions.get('s1'))?.logLevel, 'error');
      await a.sessions.update({ id: 'never-created', protocolVersion: 'x', capabilities: {} });
      assert.equal(await a.sessions.get('never-created'), undefined, 'update does not create');
      assert.equal(await b.sessions.delete('s1'), true);
      assert.equal(await b.sessions.delete('s1'), false);
      assert.equal(await a.sessions.get('s1'), undefined);
    });

    it('refuses beyond maxSessions instead of evicting, and caps each owner by ending its own oldest', async () => {
      const owned = (id: string, owner: string) => ({ id, protocolVersion: '2025-11-25', capabilities: {}, owner });
      // No pause between the creates: the ranking below depends only on get('e2') coming after e3's create.
      assert.deepEqual(await a.sessions.create(owned('e1', 'address:x'), { maxPerOwner: 2 }), { created: true });
      assert.deepEqual(await b.sessions.create(owned('e2', 'address:y'), { maxPerOwner: 2 }), { created: true });
      assert.deepEqual(await a.sessions.create(owned('e3', 'address:y'), { maxPerOwner: 2 }), { created: true });
      assert.deepEqual(await a.sessions.create(owned('e4', 'address:z'), { maxPerOwner: 2 }), {
        created: false,
        reason: 'capacity',
      });
      assert.equal(await a.sessions.get('e4'), undefined);
      await a.sessions.get('e2'); // e3 is now y's least recently used
      const ended: string[] = [];
      const stop = b.sessions.onSessionEnd((id, reason) => ended.push(`${id}:${reason}`));
      assert.deepEqual(await b.sessions.create(owned('e5', 'address:y'), { maxPerOwner: 2 }), { created: true });
      stop();
      assert.deepEqual(ended, ['e3:evicted']);
      for (const id of ['e1', 'e2', 'e5']) assert.ok(await a.sessions.get(id), id);
      for (const id of ['e1', 'e2', 'e5']) assert.equal(await a.sessions.delete(id), true);
    });

    it("ranks an owner's sessions by the order of access, even within one millisecond", async () => {
      // The ranking runs on Redis's clock (remaining TTLs), which a mocked Date cannot freeze; back
      // to back calls on localhost share a millisecond most of the time, so ten rounds cannot all
      // miss a tie. Ids sort against the order of use: a tie broken by name ends the wrong one.
      const ended: string[] = [];
      const stops = [a, b].map((backend) => backend.sessions.onSessionEnd((id) => ended.push(id)));
      try {
        for (let round = 0; round < 10; round++) {
          const owned = (id: string) => ({
            id,
            protocolVersion: '2025-11-25',
            capabilities: {},
            owner: `address:tie-${round}`,
          });
          assert.deepEqual(await a.sessions.create(owned(`tie-${round}-1`), { maxPerOwner: 2 }), { created: true });
          assert.deepEqual(await a.sessions.create(owned(`tie-${round}-2`), { maxPerOwner: 2 }), { created: true });
          assert.ok(await b.sessions.get(`tie-${round}-1`)); // tie-N-2 is now the least recently used
          assert.deepEqual(await a.sessions.create(owned(`tie-${round}-3`), { maxPerOwner: 2 }), { created: true });
          assert.deepEqual(ended, [`tie-${round}-2`], `round ${round}`);
          ended.length = 0;
          for (const id of [`tie-${round}-1`, `tie-${round}-3`]) assert.equal(await a.sessions.delete(id), true, id);
        }
      } finally {
        for (const stop of stops) stop();
      }
    });

    it('ends the least recently used session of an owner at its cap, also after the order changed since the last eviction', async () => {
      const owned = (id: string) => ({ id, protocolVersion: '2025-11-25', capabilities: {}, owner: 'principal:lru' });
      // No pause between the calls: uses within one millisecond still rank by their order.
      const ended: string[] = [];
      // Each instance reports the sessions its own creates ended.
      const stops = [a, b].map((backend) => backend.sessions.onSessionEnd((id) => ended.push(id)));
      for (const id of ['l1', 'l2', 'l3']) {
        assert.deepEqual(await a.sessions.create(owned(id), { maxPerOwner: 2 }), { created: true });
      }
      assert.deepEqual(ended, ['l1'], 'the oldest went first');
      await b.sessions.get('l2'); // l3 is now the least recently used
      assert.deepEqual(await b.sessions.create(owned('l4'), { maxPerOwner: 2 }), { created: true });
      await a.sessions.get('l4');
      await a.sessions.get('l2'); // l4 next
      assert.deepEqual(await a.sessions.create(owned('l5'), { maxPerOwner: 2 }), { created: true });
      for (const stop of stops) stop();
      assert.deepEqual(ended, ['l1', 'l3', 'l4']);
      for (const id of ['l2', 'l5']) assert.equal(await a.sessions.delete(id), true, id);
      for (const id of ['l1', 'l3', 'l4']) assert.equal(await a.sessions.get(id), undefined, id);
    });

    it('reports a session whose key Redis expired once, as "expired": to one sweep of two instances, or to the create that drops its entry', async () => {
      const idle = { ...settings, idleTtlMs: 200 };
      const option = { ...target.option(), keyPrefix: `${prefix}idle:` };
      const [c, d] = [await McpRedisBackend.connect(option, idle), await McpRedisBackend.connect(option, idle)];
      const ends = new EventEmitter();
      const ended: string[] = [];
      const stops = [c, d].map((backend) =>
        backend.sessions.onSessionEnd((id, reason) => {
          ended.push(`${id}:${reason}`);
          ends.emit(id, reason);
        }),
      );
      const endOf = (id: string, what: string): Promise<unknown[]> =>
        ended.some((e) => e.startsWith(`${id}:`)) ? Promise.resolve([]) : nextEvent(ends, id, what);
      const index = c.keys.sessionIndex;
      const redis = c.client as unknown as Ioredis;
      try {
        // Idle past its TTL: Redis drops the key, a sweep drops the entry and reports it.
        const lapsed = endOf('x1', 'a sweep reporting x1');
        await c.sessions.create({ id: 'x1', protocolVersion: '2025-11-25', capabilities: {} });
        await lapsed;
        assert.equal(
          await redis.zscore(index, '-:x1'),
          null,
          'the entry went with the report: no other sweep can report it',
        );
        // A key gone from under its entry (as at expiry, here at once): the next create over the
        // owner's cap drops the entry, and the session is reported where it went.
        const owned = (id: string) => ({
          id,
          protocolVersion: '2025-11-25',
          capabilities: {},
          owner: 'principal:idle',
        });
        assert.deepEqual(await c.sessions.create(owned('y1'), { maxPerOwner: 1 }), { created: true });
        await redis.del(c.keys.session('y1'));
        const dropped = endOf('y1', 'the report of y1');
        assert.deepEqual(await d.sessions.create(owned('y2'), { maxPerOwner: 1 }), { created: true });
        await dropped;
        assert.deepEqual(
          await redis.zrangebylex(index, '-', '+'),
          ['', `${ownerTag('principal:idle')}:y2`],
          'only the live session left in the index',
        );
        assert.deepEqual(ended, ['x1:expired', 'y1:expired']);
      } finally {
        for (const stop of stops) stop();
        await clearPrefix(c);
        await Promise.all([c.close(), d.close()]);
      }
    });

    it('stores SSE events in order, replays after an id, and binds streams to their session', async () => {
      const streamId = a.events.openStream('sess-A');
      assert.equal(typeof streamId, 'string', 'openStream is synchronous');
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++)
        ids.push(await a.events.append(streamId, { jsonrpc: '2.0', method: 'n', params: { i } }));
      assert.deepEqual([...ids].sort(compareEventIds), ids, 'ids are ordered');
      const replay = await b.events.replay('sess-A', ids[1]);
      assert.equal(replay?.streamId, streamId);
      assert.deepEqual(
        replay?.events.map((e) => (e.message as Json).params.i),
        [3, 4, 5],
      );
      assert.deepEqual(
        replay?.events.map((e) => e.id),
        ids.slice(2),
      );
      const fromPriming = await b.events.replay('sess-A', `${streamId}.0`);
      assert.equal(fromPriming?.events.length, 5);
      assert.equal(await b.events.replay('sess-B', ids[1]), undefined, 'another session cannot read it');
      assert.equal(await b.events.replay('sess-A', 'garbage'), undefined);
      assert.equal(await b.events.replay('sess-A', `${newStreamId('sess-A')}.0`), undefined, 'unknown stream');
      await a.events.finish(streamId);
      assert.equal(await a.client.call('HGET', `${P}stream:${streamId}:meta`, 'f'), '1');
    });

    it('caps each stream and gives it a TTL', async () => {
      const streamId = a.events.openStream('sess-cap');
      for (let i = 0; i < 400; i++) await a.events.append(streamId, { jsonrpc: '2.0', method: 'n', params: { i } });
      const length = (await a.client.call('XLEN', `${P}stream:${streamId}`)) as number;
      assert.ok(length < 400 && length >= 50, `length ${length}`);
      assert.ok(((await a.client.call('PTTL', `${P}stream:${streamId}`)) as number) > 0);
    });

    it('refuses a requestState nonce the second time, on any instance', async () => {
      const expiresAt = Date.now() + 5_000;
      assert.equal(await a.replayGuard.consume('nonce-1', expiresAt), true);
      assert.equal(await b.replayGuard.consume('nonce-1', expiresAt), false);
      const ttl = (await a.client.call('PTTL', `${P}nonce:nonce-1`)) as number;
      assert.ok(ttl > 0 && ttl <= 5_000);
    });

    it('fans change events out to every instance', async () => {
      const seen: McpChangeEvent[] = [];
      const stop = b.bus.subscribe((event) => (seen.push(event), changed()));
      await a.bus.publish({ type: 'list-changed', kind: 'tools' });
      await a.bus.publish({ type: 'resource-updated', uri: 'file:///x' });
      await waitFor(() => seen.length === 2);
      stop();
      assert.deepEqual(seen, [
        { type: 'list-changed', kind: 'tools' },
        { type: 'resource-updated', uri: 'file:///x' },
      ]);
    });

    it(`listens with ${target.name === 'cluster' ? 'sharded pub/sub (SSUBSCRIBE) on the slot of its keys' : 'plain pub/sub'}`, async () => {
      const client = a.client as unknown as Ioredis;
      const nodes = 'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master') : [client];
      const listed = async (kind: 'CHANNELS' | 'SHARDCHANNELS') =>
        (await Promise.all(nodes.map((node) => node.call('PUBSUB', kind, `${P}*`) as Promise<string[]>))).flat().sort();
      const wanted = [`${P}bus`, `${P}relay`, `${P}tasks`];
      if (target.name === 'cluster') {
        assert.deepEqual([...new Set(await listed('SHARDCHANNELS'))], wanted);
        assert.deepEqual(await listed('CHANNELS'), []);
      } else {
        assert.deepEqual(await listed('CHANNELS'), wanted);
      }
    });

    it('rejects bad redis options with reasons', () => {
      assert.deepEqual(redisOptionProblems({}), []);
      const problems = redisOptionProblems({
        redis: { url: 5 as never, keyPrefix: '' },
        notificationBus: {},
        sessions: { store: {} },
      }).join('; ');
      assert.match(problems, /redis\.url/);
      assert.match(problems, /keyPrefix/);
      assert.match(problems, /sessions\.store, notificationBus/);
      assert.deepEqual(
        redisOptionProblems({ redis: { cluster: { nodes: ['redis://127.0.0.1:7000'] }, shardedPubSub: false } }),
        [],
      );
      const cluster = redisOptionProblems({
        redis: { url: 'redis://x', cluster: { nodes: [] }, shardedPubSub: 'yes' as never },
      }).join('; ');
      assert.match(cluster, /"redis\.cluster" must be \{ nodes/);
      assert.match(cluster, /either a url or a cluster/);
      assert.match(cluster, /shardedPubSub/);
    });

    it('fails the bootstrap with a clear message when Redis cannot be reached', async () => {
      await assert.rejects(
        McpRedisBackend.connect(
          { url: 'redis://127.0.0.1:1', connection: { retryStrategy: () => null } },
          { ...settings, sharedStateSecret: false, connectTimeoutMs: 1000 },
        ),
        /could not use Redis at redis:\/\/127\.0\.0\.1:1.*Start Redis or fix the "redis" option/,
      );
    });

    it('reports health in the terminus shape', async () => {
      assert.deepEqual(await new McpHealthIndicator(null).isHealthy('mcp'), { mcp: { status: 'up', store: 'memory' } });
      const up = await new McpHealthIndicator(a).isHealthy('store');
      assert.equal(up.store.status, 'up');
      assert.equal(up.store.store, 'redis');
      assert.equal(typeof up.store.latencyMs, 'number');
      const closed = await McpRedisBackend.connect({ ...target.option(), keyPrefix: prefix }, settings);
      await closed.close();
      const down = await new McpHealthIndicator(closed).isHealthy('store', { timeoutMs: 300 });
      assert.equal(down.store.status, 'down');
      assert.match(String(down.store.message), /PING/);
    });

    describe('relay', () => {
      let serverA: Server;
      let serverB: Server;
      const urlOf = (server: Server): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const serve = (backend: McpRedisBackend): Promise<Server> =>
        new Promise((resolve) => {
          const server = createServer((req, res) => {
            const request: McpRelayStreamRequest = {
              sessionId: String(req.headers['mcp-session-id']),
              lastEventId: req.headers['last-event-id'] as string | undefined,
              priming: true,
              retryMs: 500,
              keepAliveMs: 200,
            };
            void backend.relay.serveStream(new NodeResponseSink(res), request);
          });
          server.listen(0, '127.0.0.1', () => resolve(server));
        });

      before(async () => {
        serverA = await serve(a);
        serverB = await serve(b);
      });
      after(() => {
        serverA.closeAllConnections();
        serverB.closeAllConnections();
        serverA.close();
        serverB.close();
      });

      it('delivers to a GET stream held by one instance what another sends, and resumes it elsewhere exactly', async () => {
        await a.sessions.create({ id: 'relay-1', protocolVersion: '2025-11-25', capabilities: {} });
        const first = await openSse(urlOf(serverA), 'relay-1');
        await waitFor(() => first.events.length === 1);
        const primingId = first.events[0].id!;
        assert.match(primingId, /\.0$/);
        for (let i = 1; i <= 3; i++)
          assert.equal(await b.relay.sendToSession('relay-1', { jsonrpc: '2.0', method: 'm', params: { i } }), true);
        await waitFor(() => first.events.length === 4);
        first.close();
        // Sent while no instance holds the stream: stored, and replayed on resume.
        for (let i = 4; i <= 5; i++)
          await a.relay.sendToSession('relay-1', { jsonrpc: '2.0', method: 'm', params: { i } });
        const second = await openSse(urlOf(serverB), 'relay-1', first.events[3].id);
        await waitFor(() => second.events.length === 2);
        await b.bus.publish({ type: 'list-changed', kind: 'prompts' });
        await waitFor(() => second.events.length === 3);
        const all = [...first.events.slice(1), ...second.events].map((e) => e.data as Json);
        assert.deepEqual(
          all.map((m) => m.params?.i ?? m.method),
          [1, 2, 3, 4, 5, 'notifications/prompts/list_changed'],
        );
        const ids = [...first.events, ...second.events].map((e) => e.id);
        assert.equal(new Set(ids).size, ids.length);
        // A new GET stream replaces the old one, which ends wherever it is tailed.
        const third = await openSse(urlOf(serverA), 'relay-1');
        await waitFor(() => second.ended);
        assert.equal(await a.relay.sendToSession('relay-1', { jsonrpc: '2.0', method: 'm', params: { i: 6 } }), true);
        await waitFor(() => third.events.length === 2);
        third.close();
        assert.equal(await a.relay.sendToSession('no-such-session', { jsonrpc: '2.0', method: 'm' }), false);
      });

      it('delivers resource updates only to subscribed sessions', async () => {
        await a.sessions.create({
          id: 'sub-yes',
          protocolVersion: '2025-11-25',
          capabilities: {},
          subscriptions: ['file:///watched'],
        });
        await a.sessions.create({ id: 'sub-no', protocolVersion: '2025-11-25', capabilities: {} });
        const yes = await openSse(urlOf(serverA), 'sub-yes');
        const no = await openSse(urlOf(serverB), 'sub-no');
        await waitFor(() => yes.events.length === 1 && no.events.length === 1);
        await b.bus.publish({ type: 'resource-updated', uri: 'file:///watched' });
        await b.bus.publish({ type: 'list-changed', kind: 'tools' });
        await waitFor(() => yes.events.length === 3 && no.events.length === 2);
        assert.deepEqual(
          yes.events.slice(1).map((e) => (e.data as Json).method),
          ['notifications/resources/updated', 'notifications/tools/list_changed'],
        );
        assert.deepEqual(
          no.events.slice(1).map((e) => (e.data as Json).method),
          ['notifications/tools/list_changed'],
        );
        yes.close();
        no.close();
      });

      it('follows a POST stream owned by another instance until it is finished', async () => {
        const streamId = a.events.openStream('post-1');
        const first = await a.events.append(streamId, { jsonrpc: '2.0', method: 'p', params: { n: 1 } });
        const tail = await openSse(urlOf(serverB), 'post-1', first);
        await a.events.append(streamId, { jsonrpc: '2.0', method: 'p', params: { n: 2 } });
        await a.events.append(streamId, { jsonrpc: '2.0', id: 7, result: {} });
        await a.events.finish(streamId);
        await waitFor(() => tail.ended);
        assert.deepEqual(
          tail.events.map((e) => (e.data as Json).params?.n ?? 'result'),
          [2, 'result'],
        );
      });

      it('routes a client answer to the instance that awaits it', async () => {
        const got: unknown[] = [];
        const stop = a.relay.onResponse((response, sessionId) => (got.push({ response, sessionId }), changed(), true));
        await b.relay.publishResponse({ jsonrpc: '2.0', id: 'srv-1', result: { ok: true } }, 'sess');
        await waitFor(() => got.length === 1);
        stop();
        assert.deepEqual(got[0], {
          response: { jsonrpc: '2.0', id: 'srv-1', result: { ok: true } },
          sessionId: 'sess',
        });
      });
    });
  });

  describe(`Redis event store bytes (${target.name})`, { skip }, () => {
    const prefix = `mcp-test:${randomBytes(6).toString('hex')}:`;
    const P = `{${prefix}}`;
    const settings = {
      name: 'spec',
      idleTtlMs: 60_000,
      maxSessions: 100,
      sharedStateSecret: false,
      eventStoreBytesPerStream: 10_000,
      eventStoreBytesPerSession: 5_000,
      eventStoreBytesTotal: 20_000,
    };
    let a: McpRedisBackend;
    const message = (i: number) => ({ jsonrpc: '2.0' as const, method: 'n', params: { i, text: 'x'.repeat(950) } });
    const size = (i: number) => JSON.stringify(message(i)).length;
    /** Bytes really held in a stream's Redis key (the JSON of its entries). */
    const held = async (streamId: string) => {
      const entries = (await a.client.call('XRANGE', `${P}stream:${streamId}`, '-', '+')) as [string, string[]][];
      return entries.reduce((n, [, fields]) => n + fields[1]!.length, 0);
    };

    before(async () => {
      a = await McpRedisBackend.connect({ ...target.option(), keyPrefix: prefix }, settings);
    });
    after(async () => {
      await clearPrefix(a);
      await a.close();
    });

    it('keeps at most maxBytesPerSession across the streams of a session, the least recently written losing its oldest first', async () => {
      const streams = [a.events.openStream('bytes-1'), a.events.openStream('bytes-1'), a.events.openStream('bytes-1')];
      for (const streamId of streams) for (let i = 0; i < 3; i++) await a.events.append(streamId, message(i));
      const kept = await Promise.all(streams.map(held));
      const sum = kept.reduce((n, b) => n + b, 0);
      assert.ok(sum <= 5_000, `the session holds ${sum} bytes: ${kept.join(', ')}`);
      assert.ok(sum > 5_000 - 2 * size(0), `only what the bound needs is dropped: ${sum}`);
      assert.equal(kept[0], 0, 'the least recently written stream lost everything first');
      assert.equal(kept[2], 3 * size(0), 'the newest stream is whole');
      assert.equal(await a.events.sessionBytes('bytes-1'), sum, 'the bookkeeping matches what Redis holds');
      const end = await a.events.replay('bytes-1', `${streams[2]}.0`);
      assert.equal(end?.events.length, 3, 'the newest events replay');
    });

    it('keeps at most maxBytesTotal across sessions, the least recently written stream losing its oldest first', async () => {
      const streams: string[] = [];
      for (let s = 0; s < 8; s++) {
        const streamId = a.events.openStream(`total-${s}`);
        streams.push(streamId);
        for (let i = 0; i < 4; i++) await a.events.append(streamId, message(i));
      }
      const kept = await Promise.all(streams.map(held));
      const sum = kept.reduce((n, b) => n + b, 0);
      const stored = await a.events.storedBytes();
      assert.ok(stored <= 20_000, `the store counts ${stored} bytes`);
      const total = (
        await Promise.all([...((await a.client.call('HKEYS', `${P}eventbytes`)) as string[])].map(held))
      ).reduce((n, b) => n + b, 0);
      assert.equal(stored, total, 'the count is what the streams hold');
      assert.ok(sum <= 20_000, `the sessions hold ${sum} bytes: ${kept.join(', ')}`);
      assert.equal(kept[0], 0, 'the oldest session lost its events first');
      assert.equal(kept[7], 4 * size(0), 'the newest session is whole');
    });

    it('releases the bytes of a session that ended', async () => {
      const streamId = a.events.openStream('ending');
      await a.events.append(streamId, message(1));
      const before = await a.events.storedBytes();
      assert.equal(await a.events.sessionBytes('ending'), size(1));
      await a.events.dropSession('ending');
      assert.equal(await a.events.storedBytes(), before - size(1));
      assert.equal(await a.events.sessionBytes('ending'), 0);
      assert.equal(await a.client.call('HEXISTS', `${P}eventbytes`, streamId), 0);
      assert.equal(
        await a.client.call('EXISTS', `${P}sessionevents:ending`, `${P}sessionbytes:ending`, `${P}stream:${streamId}`),
        0,
      );
    });

    it('forgets the bytes of streams whose keys expired, a few on each append, so neither the count nor the bookkeeping leaks', async () => {
      const start = await a.events.storedBytes();
      const gone: string[] = [];
      for (let s = 0; s < 6; s++) {
        const streamId = a.events.openStream('expiring');
        gone.push(streamId);
        await a.events.append(streamId, message(s));
      }
      assert.ok((await a.events.storedBytes()) > start);
      // What the keys' TTL does when it runs out (the bookkeeping is not told).
      for (const streamId of gone) await a.client.call('DEL', `${P}stream:${streamId}`, `${P}stream:${streamId}:meta`);
      const live = a.events.openStream('expiring');
      for (let i = 0; i < 4; i++) await a.events.append(live, message(i));
      for (const streamId of gone)
        assert.equal(await a.client.call('HEXISTS', `${P}eventbytes`, streamId), 0, 'an expired stream is forgotten');
      assert.equal(await a.events.sessionBytes('expiring'), 4 * size(0), 'the session counts only its live stream');
      const total = (
        await Promise.all([...((await a.client.call('HKEYS', `${P}eventbytes`)) as string[])].map(held))
      ).reduce((n, b) => n + b, 0);
      assert.equal(await a.events.storedBytes(), total, 'the total counts only the streams Redis holds');
      assert.ok(((await a.client.call('PTTL', `${P}eventtotal`)) as number) > 0, 'the bookkeeping expires too');
      assert.ok(((await a.client.call('PTTL', `${P}sessionbytes:expiring`)) as number) > 0);
    });

    it('starts a stream written again after its key expired from zero', async () => {
      const streamId = a.events.openStream('again');
      await a.events.append(streamId, message(1));
      await a.client.call('DEL', `${P}stream:${streamId}`);
      await a.events.append(streamId, message(2));
      assert.equal(await a.client.call('HGET', `${P}eventbytes`, streamId), String(size(2)));
      assert.equal(await a.events.sessionBytes('again'), size(2));
    });
  });
}

describe('event ids', () => {
  it('parse only for their own session', () => {
    assert.equal(parseEventId('s', 'nodot'), undefined);
    assert.equal(parseEventId('s', 'abc.1-0'), undefined);
  });
});

function compareEventIds(x: string, y: string): number {
  const [xm, xs] = x
    .slice(x.lastIndexOf('.') + 1)
    .split('-')
    .map(BigInt);
  const [ym, ys] = y
    .slice(y.lastIndexOf('.') + 1)
    .split('-')
    .map(BigInt);
  return xm === ym ? Number(xs - ys) : Number(xm - ym);
}

const waiters = new Set<() => void>();

/** Tells pending {@link waitFor} calls that something they watch changed. */
function changed(): void {
  for (const check of [...waiters]) check();
}

/** Resolves when `predicate` holds, re-checked on every {@link changed} (no polling); the timer is only a failure guard. */
function waitFor(predicate: () => boolean, ms = 10_000): Promise<void> {
  if (predicate()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      waiters.delete(check);
    };
    const check = (): void => {
      if (predicate()) (done(), resolve());
    };
    const timer = setTimeout(() => (done(), reject(new Error(`condition not met within ${ms} ms: ${predicate}`))), ms);
    waiters.add(check);
  });
}

interface OpenSse {
  events: Array<{ id?: string; data: unknown }>;
  ended: boolean;
  close(): void;
}

/** A minimal SSE reader (the e2e helpers live outside lib). */
async function openSse(url: string, sessionId: string, lastEventId?: string): Promise<OpenSse> {
  const controller = new AbortController();
  const headers: Record<string, string> = { 'mcp-session-id': sessionId };
  if (lastEventId) headers['last-event-id'] = lastEventId;
  const response = await fetch(url, { headers, signal: controller.signal });
  const state: OpenSse = { events: [], ended: false, close: () => controller.abort() };
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(':')) continue;
          let id: string | undefined;
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data = line.slice(6);
          }
          state.events.push({ id, data: data ? JSON.parse(data) : '' });
          changed();
        }
      }
    } catch {
      // aborted
    }
    state.ended = true;
    changed();
  })();
  return state;
}
