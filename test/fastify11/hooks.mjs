// Module-resolution hooks registered by register.mjs (see there for why).
const HERE = new URL('./package.json', import.meta.url).href;
const NEST = /^@nestjs\/(?:common|core|platform-fastify)(?:\/|$)/;

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  if (NEST.test(specifier)) return nextResolve(specifier, { ...context, parentURL: HERE });
  return nextResolve(specifier, context);
}
