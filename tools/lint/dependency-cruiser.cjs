// Import direction in lib/ (npm run lint). Type-only imports count: `tsPreCompilationDeps` reads
// them before TypeScript erases them, since a type import ties folders as much as a value import.
//
// The layers, bottom first. A file may import its own layer and any layer below it, never above:
// arrows point down. The order is today's folders by what they are for:
//   0 base       schema/ (DTO -> JSON Schema, no Nest) and common/ (constants, messages)
//   1 protocol   protocol/ (JSON-RPC, eras, dispatcher, context, store interfaces; no Nest)
//   2 engine     engine/ (the transport-agnostic engine every transport drives; no Nest)
//   3 services   auth/, oauth/, redis/, telemetry/ (what the engine and dispatcher are configured with)
//   4 calls      decorators/, execution/ (the Nest pipeline of one call), catalog/
//   5 discovery  discovery/ (the one provider walk, the registry, the feature contract)
//   6 packs      tools/, resources/, prompts/, completion/, tasks/, expose/, apps/, skills/, tool-sets/
//                (one capability kind each; a pack may import discovery/, never the reverse)
//   7 surfaces   admin/, health/, explorer/, transport/, client/ (what the app and its clients reach)
//   8 module     interfaces/ (the module's options, composed of every slice), the module files,
//                mcp-options.providers.ts (the slices each class injects) and mcp-features.ts
//                (the list of packs)
//   9 entries    index.ts, entries/, testing/, cli/ (the package's entry points)
// protocol/, engine/ and schema/ import no @nestjs/* at all.
const LAYERS = [
  ['lib/schema/', 'lib/common/'],
  ['lib/protocol/'],
  ['lib/engine/'],
  ['lib/auth/', 'lib/oauth/', 'lib/redis/', 'lib/telemetry/'],
  ['lib/decorators/', 'lib/execution/', 'lib/catalog/'],
  ['lib/discovery/'],
  [
    'lib/tools/',
    'lib/resources/',
    'lib/prompts/',
    'lib/completion/',
    'lib/tasks/',
    'lib/expose/',
    'lib/apps/',
    'lib/skills/',
    'lib/tool-sets/',
  ],
  ['lib/admin/', 'lib/health/', 'lib/explorer/', 'lib/transport/', 'lib/client/'],
  [
    'lib/interfaces/',
    'lib/mcp\\.module\\.ts$',
    'lib/mcp\\.module-definition\\.ts$',
    'lib/mcp-options\\.resolver\\.ts$',
    'lib/mcp-options\\.providers\\.ts$',
    'lib/mcp-features\\.ts$',
  ],
  ['lib/index\\.ts$', 'lib/entries/', 'lib/testing/', 'lib/cli/'],
];
const anyOf = (paths) => `^(${paths.join('|')})`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-without-nest',
      comment:
        'protocol/, engine/ and schema/ stay free of Nest: the engine runs under any transport, the schema code under any caller.',
      severity: 'error',
      from: { path: '^lib/(protocol|engine|schema)/' },
      to: { path: '(^|/)node_modules/@nestjs/' },
    },
    {
      name: 'pack-methods-without-nest',
      comment:
        "A pack's protocol methods stay free of Nest like protocol/ itself: they install into any McpFeatureHost.",
      severity: 'error',
      from: { path: '^lib/(resources/resources|prompts/prompts|completion/completion)\\.ts$' },
      to: { path: '(^|/)node_modules/@nestjs/' },
    },
    ...LAYERS.slice(0, -1).map((layer, index) => ({
      name: `layer-${index}-points-down`,
      comment: `A file of layer ${index} (${layer.join(', ')}) imports a layer above it.`,
      severity: 'error',
      from: { path: anyOf(layer) },
      to: { path: anyOf(LAYERS.slice(index + 1).flat()) },
    })),
    {
      name: 'every-folder-has-a-layer',
      comment: 'A lib file outside every layer above has no direction to keep: add its folder to LAYERS.',
      severity: 'error',
      from: { path: '^lib/', pathNot: anyOf(LAYERS.flat()) },
      to: { path: '^lib/' },
    },
    {
      name: 'no-folder-cycle',
      comment: 'The folders of lib/ form no cycle, type imports included.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^lib/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.spec\\.ts$' },
    includeOnly: '^(lib/|node_modules/@nestjs/)',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.lib.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
