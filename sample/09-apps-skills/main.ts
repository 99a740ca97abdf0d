import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const app = await NestFactory.create(AppModule);
app.enableShutdownHooks();
await app.listen(port, host);
// PORT=0 picks a free port: print the one the server got.
console.log(`MCP endpoint: http://${host}:${(app.getHttpServer().address() as AddressInfo).port}/mcp`);
