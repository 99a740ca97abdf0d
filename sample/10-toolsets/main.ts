import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const app = await NestFactory.create(AppModule);
app.enableShutdownHooks();
await app.listen(port, host);
console.log(`MCP endpoint: http://${host}:${port}/mcp (bearer alice-token, bob-token or carol-token)`);
