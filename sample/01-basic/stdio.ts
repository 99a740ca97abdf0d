import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { McpStdio, McpStdioLogger } from 'nestjs-model-context/transports';
import { AppModule } from './app.module.js';

// The same AppModule, served over stdio instead of HTTP: a client starts this file as a
// subprocess (`npm run sample:stdio`, or `node dist/sample/01-basic/stdio.js`) and speaks
// newline-delimited JSON-RPC on its stdin/stdout. Nest logs go to stderr; the process ends when
// the client closes stdin.
const app = await NestFactory.createApplicationContext(AppModule, { logger: new McpStdioLogger() });
app.enableShutdownHooks();
await McpStdio.serve(app);
