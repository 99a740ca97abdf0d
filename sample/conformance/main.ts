import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

// `npm run sample:conformance`, then e.g.
// `node scripts/conformance.mjs --url http://127.0.0.1:3000/mcp --leg 2026`.
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(port, host);
console.log(`MCP conformance fixture: http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/mcp`);
