import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { McpModule, type McpPrincipal } from 'nestjs-model-context';
import { TasksService } from './tasks.service.js';
import { TasksTools } from './tasks.tools.js';

// Sample 01's tools for clients that speak only the legacy HTTP+SSE transport (protocol
// 2024-11-05, the SDK's SSEClientTransport): GET /sse opens the stream, which announces the
// /messages URL to POST to. Streamable HTTP stays on at /mcp for every other client.
//
// `MCP_TOKENS="token-a:alice,token-b:bob"` turns bearer auth on, each token naming its principal
// (a stand-in for a real token verifier); without it the endpoints are open, as in main.ts.
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const shown = host === '0.0.0.0' ? '127.0.0.1' : host;
const tokens = new Map(
  (process.env.MCP_TOKENS ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => pair.split(':') as [string, string]),
);

@Module({
  imports: [
    McpModule.forRoot({
      name: 'task-tracker',
      version: '1.0.0',
      title: 'Task tracker (legacy SSE)',
      instructions: 'Manage a small task list: create, list, complete and delete tasks.',
      legacySse: { path: 'sse', messagesPath: 'messages' },
      auth:
        tokens.size > 0
          ? {
              resource: `http://${shown}:${port}/sse`,
              authorizationServers: ['https://auth.example.com'],
              verifyToken: (token): McpPrincipal | null => (tokens.has(token) ? { id: tokens.get(token)! } : null),
            }
          : undefined,
    }),
  ],
  providers: [TasksService, TasksTools],
})
class LegacySseAppModule {}

const app = await NestFactory.create(LegacySseAppModule);
app.enableShutdownHooks();
await app.listen(port, host);
console.log(`MCP legacy SSE endpoint: http://${shown}:${port}/sse (Streamable HTTP: http://${shown}:${port}/mcp)`);
