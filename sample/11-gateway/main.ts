import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

// Start sample 02 first (PORT=3002 node dist/sample/02-streaming/main.js), then this gateway;
// mint a token with `node dist/sample/05-auth-guards/mint-token.js alice analyst`.
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const app = await NestFactory.create(AppModule);
app.enableShutdownHooks();
await app.listen(port, host);
console.log(`MCP gateway: http://${host}:${port}/mcp`);
