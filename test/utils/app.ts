import 'reflect-metadata';
import type { DynamicModule, INestApplication, LoggerService, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';

export interface RunningApp {
  app: INestApplication;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  base: string;
  /** The MCP endpoint URL. */
  url: string;
  close(): Promise<void>;
}

/** The HTTP platforms a test app can run on. */
export type TestPlatform = 'express' | 'fastify';

/** The HTTP adapter of a platform; `fastifyOptions` go to `new FastifyAdapter(...)`. */
async function adapterFor(platform: TestPlatform, fastifyOptions?: Record<string, unknown>): Promise<unknown> {
  if (platform === 'express') return undefined;
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  return new FastifyAdapter(fastifyOptions);
}

/** Starts a real Nest app on a free loopback port, on Express unless `platform` says otherwise. */
export async function startApp(
  module: Type<unknown> | DynamicModule,
  options: {
    path?: string;
    port?: number;
    configure?: (app: INestApplication) => void | Promise<void>;
    logger?: boolean | LoggerService;
    platform?: TestPlatform;
    fastifyOptions?: Record<string, unknown>;
  } = {},
): Promise<RunningApp> {
  const adapter = await adapterFor(options.platform ?? 'express', options.fastifyOptions);
  const appOptions = {
    logger: typeof options.logger === 'object' ? options.logger : options.logger ? undefined : (false as const),
  };
  const app = adapter
    ? await NestFactory.create(module, adapter as Parameters<typeof NestFactory.create>[1] & object, appOptions)
    : await NestFactory.create(module, appOptions);
  await options.configure?.(app);
  await app.listen(options.port ?? 0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    app,
    base,
    url: `${base}/${options.path ?? 'mcp'}`,
    close: () => app.close(),
  };
}
