import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { McpStdio, McpStdioLogger } from 'nestjs-model-context/transports';
import { AppModule } from './app.module.js';

// The conformance fixture over stdio (the interop tests spawn it): `node dist/sample/conformance/stdio.js`.
const app = await NestFactory.createApplicationContext(AppModule, {
  logger: new McpStdioLogger({ logLevels: ['error', 'warn'] }),
});
app.enableShutdownHooks();
await McpStdio.serve(app);
