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

/** Starts a real Nest app on a free loopback port. */
export async function startApp(
  module: Type<unknown> | DynamicModule,
  options: { path?: string; port?: number; configure?: (app: INestApplication) => void | Promise<void>; logger?: boolean | LoggerService } = {},
): Promise<RunningApp> {
  const logger = typeof options.logger === 'object' ? options.logger : options.logger ? undefined : false;
  const app = await NestFactory.create(module, { logger });
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
