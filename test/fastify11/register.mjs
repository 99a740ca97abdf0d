// Preloaded with `node --import ./test/fastify11/register.mjs <app>` by test/e2e/fastify.e2e-spec.ts.
// The library and the test fixtures import `@nestjs/*` from the repository, whose node_modules
// holds Nest 12. In this process every such import resolves from this folder instead, which holds
// Nest 11 and @nestjs/platform-fastify 11: one Nest copy in the process, the one under test.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
