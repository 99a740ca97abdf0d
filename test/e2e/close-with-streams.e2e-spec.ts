/**
 * `app.close()` without a signal while clients hold streams open: Nest closes the HTTP server
 * before `onApplicationShutdown`, and the server waits for every open response, so a stream the
 * module ended only there held `app.close()` forever (the gateway bench hung on it). Now the
 * module ends its streams first. Each wait is for an event: the close resolving, the streams ending.
 */
import assert from 'node:assert/strict';
import { Injectable, Module } from '@nestjs/common';
import { describe, it } from 'node:test';
import { IsString } from 'class-validator';
import { Args, McpModule, Tool } from 'nestjs-model-context';
import { startApp } from '../utils/app.js';
import { modernHeaders, modernMeta } from '../utils/clients.js';
import { follow } from '../utils/follow.js';
import { guard } from '../utils/wait.js';

const ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

class EchoDto {
  @IsString()
  text!: string;
}

@Injectable()
class EchoTools {
  @Tool({ description: 'Echo.' })
  echo(@Args() { text }: EchoDto): string {
    return text;
  }
}

@Module({ imports: [McpModule.forRoot({ name: 'close-with-streams', version: '1' })], providers: [EchoTools] })
class StreamsModule {}

for (const platform of ['express', 'fastify'] as const) {
  describe(`app.close() with open streams (${platform})`, () => {
    it('ends a legacy session GET stream and a 2026-07-28 subscriptions/listen stream, and returns', async () => {
      const running = await startApp(StreamsModule, { platform });
      const init = await fetch(running.url, {
        method: 'POST',
        headers: ACCEPT,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'close', version: '1' } },
        }),
      });
      const sessionId = init.headers.get('mcp-session-id');
      assert.ok(sessionId, 'a session id');
      await init.arrayBuffer();
      const session = { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' };
      const initialized = await fetch(running.url, {
        method: 'POST',
        headers: { ...ACCEPT, ...session },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      assert.equal(initialized.status, 202);
      const get = await fetch(running.url, { headers: { Accept: 'text/event-stream', ...session } });
      assert.equal(get.status, 200);
      const legacyStream = follow(get);

      const listen = await fetch(running.url, {
        method: 'POST',
        headers: { ...ACCEPT, ...modernHeaders('subscriptions/listen') },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'L1',
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
        }),
      });
      assert.equal(listen.status, 200);
      const modernStream = follow(listen);
      await modernStream.until(
        (events) =>
          events.some(
            (e) => (e.data as { method?: string } | undefined)?.method === 'notifications/subscriptions/acknowledged',
          ),
        10_000,
        'the listen acknowledgement',
      );

      await guard(running.close(), 'app.close() with two streams open', 30_000);
      const [legacyEnd, modernEnd] = await Promise.all([legacyStream.done, modernStream.done]);
      assert.equal(legacyEnd.timedOut, false, 'the GET stream ended');
      assert.equal(modernEnd.timedOut, false, 'the listen stream ended');
    });
  });
}
