// @rekog/mcp-nest 2.0.5 serving the bench tool set on Nest 12 + Express (bench/node_modules):
// a McpStrategy with one StreamableHttpTransport at /mcp ('dual' posture: 2025-11-25 and
// 2026-07-28), stateful or stateless per MCP_SESSIONS, other settings at their defaults.
// Plain JavaScript, so the decorators are applied by hand, in the order TypeScript applies them.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import { McpController, McpStrategy, StreamableHttpTransport, Tool } from '@rekog/mcp-nest';
import { PROGRESS_STEPS, echoSchema, fillerTools, serverEnv } from './tool-set.mjs';

const env = serverEnv();
const text = (value) => ({ content: [{ type: 'text', text: value }] });

class BenchTools {
  async echo(_args, _ctx) {
    return text('hello');
  }

  async progress(_args, ctx) {
    for (let step = 1; step <= PROGRESS_STEPS; step++)
      await ctx.reportProgress({ progress: step, total: PROGRESS_STEPS });
    return text('done');
  }
}

function defineTool(key, options, body) {
  const proto = BenchTools.prototype;
  if (body) Object.defineProperty(proto, key, { value: body, writable: true, configurable: true });
  Payload()(proto, key, 0);
  Ctx()(proto, key, 1);
  Tool(options)(proto, key, Object.getOwnPropertyDescriptor(proto, key));
}

defineTool('echo', { name: 'echo', description: 'Echoes a text; always answers "hello".', parameters: echoSchema });
defineTool('progress', {
  name: 'progress',
  description: `Reports ${PROGRESS_STEPS} progress steps, then answers "done".`,
  parameters: echoSchema,
});
for (const tool of fillerTools(env.tools)) defineTool(tool.name.replace('_', ''), tool, async () => text('ok'));
McpController()(BenchTools);

class BenchModule {}
Module({ controllers: [BenchTools] })(BenchModule);

const mcp = new McpStrategy({
  name: 'bench-rekog',
  version: '1.0.0',
  transports: [new StreamableHttpTransport({ statefulMode: env.stateful })],
  logging: false,
});

const app = await NestFactory.create(BenchModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
mcp.setHttpAdapter(app.getHttpAdapter());
app.connectMicroservice({ strategy: mcp });
await app.startAllMicroservices();
await app.listen(env.port, env.host);
console.log(
  `READY http://${env.host}:${env.port}/mcp (rekog, ${env.stateful ? 'stateful' : 'stateless'}, ${env.tools} tools)`,
);
