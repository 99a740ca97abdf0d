/**
 * The benchmark's ceiling: a bare Nest + Express controller that parses the JSON-RPC body and
 * returns hand-built results with the same bytes the MCP servers answer (no validation, no
 * protocol rules). Every ratio in the bench is taken against this server in the same run.
 *
 *   PORT=4000 MCP_SESSIONS=stateful MCP_TOOLS=50 node dist/bench/bare-server.js
 */
import 'reflect-metadata';
import { Controller, Delete, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';

type Json = Record<string, unknown>;

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const stateful = (process.env.MCP_SESSIONS ?? 'stateful') === 'stateful';
const toolCount = Number(process.env.MCP_TOOLS ?? 5);

const text = { type: 'string' };
const nullable = (schema: Json): Json => ({ ...schema, type: [schema.type, 'null'] });
const object = (properties: Json, required: string[]): Json => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const echoSchema = object({ text }, ['text']);
// The same four shapes bench/echo-server.ts cycles through, written out by hand.
const fillerSchemas: Json[] = [
  object(
    {
      title: { type: 'string', minLength: 1, maxLength: 200 },
      priority: { type: ['string', 'null'], enum: ['low', 'medium', 'high', null] },
      tags: nullable({ type: 'array', maxItems: 10, items: text }),
    },
    ['title'],
  ),
  object(
    {
      query: { type: 'string', minLength: 1, maxLength: 100 },
      limit: nullable({ type: 'integer', minimum: 1, maximum: 100 }),
      page: nullable({ type: 'integer', minimum: 0 }),
    },
    ['query'],
  ),
  object(
    {
      id: { type: 'string', format: 'uuid' },
      owner: object(
        { name: { type: 'string', minLength: 1, maxLength: 80 }, email: { type: 'string', format: 'email' } },
        ['name', 'email'],
      ),
    },
    ['id'],
  ),
  object({ enabled: { type: 'boolean' }, ratio: { type: 'number', minimum: 0, maximum: 1 }, note: nullable(text) }, [
    'enabled',
    'ratio',
  ]),
];
const tools: Json[] = [
  { name: 'echo', inputSchema: echoSchema, description: 'Echoes a text; always answers "hello".' },
  { name: 'progress', inputSchema: echoSchema, description: 'Reports 100 progress steps, then answers "done".' },
];
for (let i = 3; i <= toolCount; i++) {
  tools.push({
    name: `tool_${i}`,
    inputSchema: fillerSchemas[(i - 3) % fillerSchemas.length],
    description: `Benchmark filler tool number ${i}.`,
  });
}

const sessions = new Map<string, Json>();

@Controller('mcp')
class BareController {
  @Post()
  post(@Req() req: Request, @Res() res: Response): void {
    const body = req.body as Json;
    const id = body.id;
    const params = (body.params ?? {}) as Json;
    if (id === undefined) {
      res.status(202).end();
      return;
    }
    switch (body.method) {
      case 'initialize': {
        if (stateful) {
          const sessionId = randomUUID();
          sessions.set(sessionId, {
            protocolVersion: '2025-11-25',
            capabilities: params.capabilities,
            clientInfo: params.clientInfo,
          });
          res.setHeader('Mcp-Session-Id', sessionId);
        }
        res.status(200).json({
          jsonrpc: '2.0',
          id,
          result: {
            protocolVersion: '2025-11-25',
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: 'bench-bare', version: '1.0.0' },
          },
        });
        return;
      }
      case 'tools/list':
        res.status(200).json({ jsonrpc: '2.0', id, result: { tools } });
        return;
      case 'tools/call': {
        const token = (params._meta as Json | undefined)?.progressToken;
        if (params.name === 'progress' && token !== undefined) {
          res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
          for (let step = 1; step <= 100; step++) {
            const note = {
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken: token, progress: step, total: 100 },
            };
            res.write(`event: message\ndata: ${JSON.stringify(note)}\n\n`);
          }
          const done = { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } };
          res.end(`event: message\ndata: ${JSON.stringify(done)}\n\n`);
          return;
        }
        res.status(200).json({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'hello' }] } });
        return;
      }
      default:
        res
          .status(200)
          .json({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${String(body.method)}` } });
    }
  }

  @Delete()
  delete(@Req() req: Request, @Res() res: Response): void {
    const sessionId = req.headers['mcp-session-id'];
    res.status(typeof sessionId === 'string' && sessions.delete(sessionId) ? 200 : 404).end();
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

const app = await NestFactory.create(BareModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(port, host);
console.log(`READY http://${host}:${port}/mcp (bare, ${stateful ? 'stateful' : 'stateless'}, ${toolCount} tools)`);
