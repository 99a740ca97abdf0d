/**
 * The app bench/soak.mjs measures: this module with its defaults, on loopback, plus `flood`, a
 * tool that streams many progress notifications (the slow-reader case). Run as a child process by
 * the bench (`node --expose-gc`), it answers `measure` messages with heap figures after GC.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsInt, Max, Min } from 'class-validator';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Args, Ctx, McpContext, McpModule, Tool } from 'nestjs-model-context';
import { InMemoryEventStore } from 'nestjs-model-context/stores';

export class AskDto {
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  bytes!: number;
}

export class FloodDto {
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  count!: number;

  @IsInt()
  @Min(1)
  @Max(65_536)
  bytes!: number;
}

@Injectable()
export class SoakTools {
  @Tool({ description: 'Answers "ok".' })
  ok(): string {
    return 'ok';
  }

  @Tool({ description: 'Asks the user to confirm, with a message of `bytes` bytes (elicitation).' })
  async ask(@Args() { bytes }: AskDto, @Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('x'.repeat(bytes), { type: 'object', properties: { ok: { type: 'boolean' } } });
    return outcome.action;
  }

  @Tool({ description: 'Sends `count` progress notifications of `bytes` bytes each (needs a progressToken).' })
  async flood(@Args() { count, bytes }: FloodDto, @Ctx() ctx: McpContext): Promise<string> {
    const socket = (ctx.request as IncomingMessage).socket;
    socket.once('close', () => process.send?.({ event: 'flood-socket-closed' }));
    const text = 'x'.repeat(bytes);
    let sent = 0;
    while (sent < count && !ctx.signal.aborted) {
      ctx.progress(++sent, count, text);
      // Yield now and then, as a real producer would, so that writes can drain (or back up).
      if (sent % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    process.send?.({ event: 'flood-done', sent, aborted: ctx.signal.aborted, bufferedBytes: socket.writableLength });
    return 'done';
  }
}

/**
 * SOAK_EVENT_TTL_MS shortens how long the in-memory event store keeps streams (default 5 min):
 * with it, what the event store holds for ended sessions drops out of the figures.
 */
const eventTtlMs = process.env.SOAK_EVENT_TTL_MS === undefined ? undefined : Number(process.env.SOAK_EVENT_TTL_MS);
/** SOAK_EVENT_TOTAL_BYTES sets limits.eventStoreBytesTotal (default 64 MiB), for case (e). */
const eventTotalBytes =
  process.env.SOAK_EVENT_TOTAL_BYTES === undefined ? undefined : Number(process.env.SOAK_EVENT_TOTAL_BYTES);

@Module({
  imports: [
    McpModule.forRoot({
      name: 'soak',
      version: '1.0.0',
      sessions:
        eventTtlMs === undefined
          ? undefined
          : { eventStore: new InMemoryEventStore({ maxEventsPerStream: 1000, maxStreams: 10_000, ttlMs: eventTtlMs }) },
      limits: eventTotalBytes === undefined ? undefined : { eventStoreBytesTotal: eventTotalBytes },
    }),
  ],
  providers: [SoakTools],
})
export class SoakModule {}

/** Starts the app on a free loopback port; 'trust proxy' lets the bench play several client addresses. */
export async function startSoakApp(): Promise<{ port: number; close(): Promise<void> }> {
  const app = await NestFactory.create(SoakModule, { logger: ['error'] });
  (app.getHttpAdapter().getInstance() as { set(name: string, value: unknown): void }).set('trust proxy', 'loopback');
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { port, close: () => app.close() };
}
