// Preloaded with `node --import ./scripts/conformance-register.mjs <conformance bin> ...`.
// Both published bundles of @modelcontextprotocol/conformance import `globSync` from `fs` at top
// level, which only exists on Node 22+, so on Node 20 every subcommand dies at link time. The hook
// hands those bundles an `fs` that carries a small `globSync`; node_modules stays untouched.
import fs from 'node:fs';
import { register } from 'node:module';

// On Node 22+ the real `fs.globSync` exists and the bundles link as published.
if (typeof fs.globSync !== 'function') {
  register('./conformance-hooks.mjs', import.meta.url);
}
