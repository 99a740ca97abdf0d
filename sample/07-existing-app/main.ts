import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

const app = await NestFactory.create(AppModule);
app.enableShutdownHooks();
await app.listen(port, host);
const shown = host === '0.0.0.0' ? '127.0.0.1' : host;
console.log(`REST: http://${shown}:${port}/orders (Authorization: Bearer dev-token)`);
console.log(`MCP endpoint: http://${shown}:${port}/mcp`);
