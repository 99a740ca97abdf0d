/**
 * The Fastify 11 app of test/e2e/fastify.e2e-spec.ts, run in its own process with
 * `--import test/fastify11/register.mjs` so that it loads Nest 11 and @nestjs/platform-fastify 11
 * from this folder. Writes one JSON line `{ ready, port, versions }` on stdout once listening,
 * then `{ event }` for each fixture side effect (a teardown, for example), and exits on SIGTERM.
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InteractiveModule, events } from '../fixtures/interactive.module.js';
import { startApp } from '../utils/app.js';

function versionOf(pkg: string): string {
  // Resolved as the app's own imports are (through the hooks), so this is the copy in use.
  const main = fileURLToPath(import.meta.resolve(pkg));
  const root = main.slice(0, main.lastIndexOf(`/node_modules/${pkg}/`) + `/node_modules/${pkg}/`.length);
  return (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }).version;
}

const push = events.push.bind(events);
events.push = (...items: string[]): number => {
  for (const item of items) process.stdout.write(`${JSON.stringify({ event: item })}\n`);
  return push(...items);
};

const server = await startApp(InteractiveModule.register(), { platform: 'fastify' });
const fastify = server.app.getHttpAdapter().getInstance() as { version: string };
const versions = {
  nestCore: versionOf('@nestjs/core'),
  nestCommon: versionOf('@nestjs/common'),
  platformFastify: versionOf('@nestjs/platform-fastify'),
  fastify: fastify.version,
};
process.stdout.write(`${JSON.stringify({ ready: true, port: Number(new URL(server.base).port), versions })}\n`);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
