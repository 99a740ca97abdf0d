#!/usr/bin/env node
// The package's bin: `nestjs-model-context catalog ...` (see catalog.command.ts).
import 'reflect-metadata';
import { runCli } from './catalog.command.js';

void runCli(process.argv.slice(2), {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
}).then((code) => {
  // The app is closed; a stray timer of the user's module must not keep the command alive.
  process.stdout.write('', () => process.exit(code));
});
