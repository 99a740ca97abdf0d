// The official SDK v2 (@modelcontextprotocol/server 2.4.0) serving the bench tool set through its
// createMcpHandler (2026-07-28 requests on the modern leg, 2025-era requests on its stateless
// legacy fallback; it keeps no sessions), wrapped with toNodeHandler from @modelcontextprotocol/node
// and mounted in a Nest 12 + Express controller at /mcp behind the Host/Origin guards the SDK
// documents for hand-wired servers. The factory builds a fresh McpServer per request, as the
// handler is designed to.
import 'reflect-metadata';
import { All, Controller, Module, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { PROGRESS_STEPS, echoSchema, fillerTools, serverEnv } from './tool-set.mjs';

const env = serverEnv();
const text = (value) => ({ content: [{ type: 'text', text: value }] });
const fillers = fillerTools(env.tools);

function buildServer() {
  const server = new McpServer({ name: 'bench-sdk', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes a text; always answers "hello".', inputSchema: echoSchema },
    async () => text('hello'),
  );
  server.registerTool(
    'progress',
    { description: `Reports ${PROGRESS_STEPS} progress steps, then answers "done".`, inputSchema: echoSchema },
    async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        for (let step = 1; step <= PROGRESS_STEPS; step++) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: PROGRESS_STEPS },
          });
        }
      }
      return text('done');
    },
  );
  for (const tool of fillers) {
    server.registerTool(tool.name, { description: tool.description, inputSchema: tool.parameters }, async () =>
      text('ok'),
    );
  }
  return server;
}

const handler = createMcpHandler(() => buildServer(), {
  onerror: (error) => console.error(`sdk handler: ${error.message}`),
});
const nodeHandler = toNodeHandler(handler);
const validHost = localhostHostValidation();
const validOrigin = localhostOriginValidation();

class SdkController {
  async handle(req, res) {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    await nodeHandler(req, res, req.body);
  }
}
const proto = SdkController.prototype;
Req()(proto, 'handle', 0);
Res()(proto, 'handle', 1);
All()(proto, 'handle', Object.getOwnPropertyDescriptor(proto, 'handle'));
Controller('mcp')(SdkController);

class SdkModule {}
Module({ controllers: [SdkController] })(SdkModule);

const app = await NestFactory.create(SdkModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(env.port, env.host);
console.log(`READY http://${env.host}:${env.port}/mcp (sdk v2 createMcpHandler, no sessions, ${env.tools} tools)`);
