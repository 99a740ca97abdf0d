/** One instance: `REDIS_URL=redis://127.0.0.1:6379 PORT=3001 node dist/sample/06-scale-out/instance.js` */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule, INSTANCE } from './app.module.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3001);

const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(port, host);
console.log(
  `${INSTANCE}: MCP endpoint http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/mcp (state in ${process.env.REDIS_URL ? 'Redis' : 'memory'})`,
);
