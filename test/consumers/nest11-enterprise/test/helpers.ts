import { INestApplication, ModuleMetadata } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/setup';

export type Platform = 'express' | 'fastify';

export interface RunningApp {
  app: INestApplication;
  base: string;
}

/**
 * The app as main.ts starts it (HTTP_ADAPTER=fastify for Fastify), on a free port; `metadata`
 * composes another root module from the app's feature modules.
 */
export async function startApp(platform: Platform, metadata: ModuleMetadata = { imports: [AppModule] }): Promise<RunningApp> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: ['error'] })
      : moduleRef.createNestApplication({ logger: ['error'] });
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, base: `http://127.0.0.1:${port}` };
}

export const USERS = {
  alice: { username: 'alice', password: 'alice-password' },
  bob: { username: 'bob', password: 'bob-password' },
  carol: { username: 'carol', password: 'carol-password' },
};

export async function login(app: INestApplication, who: keyof typeof USERS): Promise<string> {
  const res = await request(app.getHttpServer()).post('/api/v1/auth/login').send(USERS[who]).expect(200);
  return (res.body as { access_token: string }).access_token;
}

/** @modelcontextprotocol/sdk's client (2025-11-25) on the endpoint, with a bearer token. */
export async function connectSdk(base: string, token: string, query = ''): Promise<{ client: Client; close(): Promise<void> }> {
  const client = new Client({ name: 'crm-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp${query}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}
