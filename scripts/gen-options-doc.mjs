// Writes docs/options.md, the options reference of McpModule.forRoot()/forRootAsync(), from the
// options types themselves (McpModuleExtras and McpModuleOptions, with their nested option
// objects), their JSDoc and their @default tags, read with the TypeScript compiler's API. So the
// page cannot drift from the typings: test/e2e/docs.e2e-spec.ts runs `--check`.
// Usage: node scripts/gen-options-doc.mjs            write docs/options.md
//        node scripts/gen-options-doc.mjs --check    exit 1 if docs/options.md is not what it would write
//        node scripts/gen-options-doc.mjs --list     print the option paths as JSON
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API, SymbolFlags } from 'typescript/unstable/sync';

const root = fileURLToPath(new URL('..', import.meta.url));
const PAGE = join(root, 'docs/options.md');
/** Nested option objects are listed down to `parent.child`; deeper objects are described by their type. */
const MAX_DEPTH = 2;

/** Every option, in declaration order, each nested option right after its parent. */
export function collectOptions() {
  const api = new API({ cwd: root });
  try {
    const snapshot = api.updateSnapshot({ openProjects: [join(root, 'tsconfig.lib.json')] });
    const project = snapshot.getProjects()[0];
    const { checker, program } = project;
    // The option types an app names live in the root entry and in the /options subpath.
    const exports = ['lib/index.ts', 'lib/entries/options.ts'].flatMap((file) => {
      const entry = program.getSourceFile(join(root, file));
      if (!entry) throw new Error(`${file} is not in tsconfig.lib.json`);
      return checker.getExportsOfModule(checker.getSymbolAtLocation(entry));
    });
    const exported = (name) => {
      const symbol = exports.find((s) => s.name === name);
      if (!symbol)
        throw new Error(
          `neither lib/index.ts nor lib/entries/options.ts exports ${name}: the options reference reads it`,
        );
      return checker.getDeclaredTypeOfSymbol(symbol);
    };

    /** The object types of `type` worth listing option by option: plain option bags, not stores or functions. */
    const optionObjects = (type) => {
      const members = type.isUnionType() ? type.getTypes() : [type];
      return members.filter((member) => {
        if (!member.isObjectType()) return false;
        if (checker.getSignaturesOfType(member, 0).length > 0) return false; // a function
        const name = checker.typeToString(member);
        if (/\[\]$|^(?:RegExp|Buffer|Array<|ReadonlyArray<|Promise<)/.test(name)) return false;
        const props = checker.getPropertiesOfType(member);
        return props.length > 0 && props.every((p) => (p.flags & SymbolFlags.Method) === 0);
      });
    };

    const rows = [];
    const walk = (type, prefix, depth, group) => {
      for (const property of checker.getPropertiesOfType(type)) {
        const path = prefix ? `${prefix}.${property.name}` : property.name;
        const propertyType = checker.getTypeOfSymbol(property);
        const tags = property.getJsDocTags(checker);
        const tag = (name) => tags.find((t) => t.name === name);
        if (tag('internal') || tag('deprecated')) continue;
        const text = (parts) => (typeof parts === 'string' ? parts : (parts ?? []).map((p) => p.text).join(''));
        const objects = depth < MAX_DEPTH ? optionObjects(propertyType) : [];
        const typeText = checker.typeToString(propertyType).replace(/ \| undefined$/, '');
        rows.push({
          path,
          group,
          optional: (property.flags & SymbolFlags.Optional) !== 0,
          // An inline object type listed field by field below is just `object` here.
          type: objects.length > 0 && typeText.startsWith('{') ? 'object' : typeText,
          description: property.getDocumentationComment(checker),
          default: tag('default') ? text(tag('default').text) : undefined,
          example: tag('example') ? text(tag('example').text) : undefined,
        });
        for (const object of objects) walk(object, path, depth + 1, group);
      }
    };
    walk(exported('McpModuleExtras'), '', 1, 'extras');
    walk(exported('McpModuleOptions'), '', 1, 'options');
    // An option reached through two object members of a union (rare) is listed once.
    const seen = new Set();
    return rows.filter((row) => !seen.has(row.path) && seen.add(row.path));
  } finally {
    api.close();
  }
}

/** Markdown-safe table cell: one line, pipes escaped, JSDoc links as code. */
const cell = (text) =>
  (text ?? '')
    .replace(/\{@link\s+([^}\s|]+)(?:[\s|][^}]*)?\}/g, '`$1`')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();

const code = (text) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

export function render(rows) {
  const table = (group) => [
    '| option | type | default | what it does |',
    '| --- | --- | --- | --- |',
    ...rows
      .filter((row) => row.group === group)
      .map((row) => {
        const type = cell(row.type);
        const fallback = row.default !== undefined ? cell(row.default) : row.optional ? '—' : 'required';
        const example = row.example ? ` Example: ${cell(row.example)}` : '';
        return `| \`${row.path}\` | ${code(type)} | ${fallback} | ${cell(row.description)}${example} |`;
      }),
  ];
  return [
    '# Options reference',
    '',
    '```ts',
    "McpModule.forRoot({ name: 'crm', version: '1.0.0', pageSize: 50 });",
    'McpModule.forRootAsync({',
    '  inject: [ConfigService],',
    "  useFactory: (config: ConfigService) => ({ name: 'crm', version: config.getOrThrow('VERSION'), pageSize: 50 }),",
    "  path: 'mcp', // the synchronous options sit beside useFactory",
    '});',
    '```',
    '',
    '<!-- Generated by scripts/gen-options-doc.mjs from the options types and their JSDoc: edit those, then run `node scripts/gen-options-doc.mjs`. -->',
    '',
    'This page is generated from the typings (`McpModuleExtras`, `McpModuleOptions` and the option',
    'objects they nest), so it lists every option the module takes; test/e2e/docs.e2e-spec.ts fails',
    'when it is stale. Every bound on what a caller can make the server hold is an option with a safe',
    'default; the threat model and what each bound protects are in [SECURITY.md](../SECURITY.md).',
    '',
    'Two `McpModule`s in one app (each with its own `path` and `include`) serve two endpoints with',
    'separate capability sets. `McpRegistry` (exported by the module) adds and removes tools,',
    'resources, templates and prompts at runtime.',
    '',
    '## Synchronous options',
    '',
    "They shape the module's routes, so they are known when the module is defined: pass them to",
    '`forRoot()` with the rest, or beside `useFactory` / `useClass` / `useExisting` in `forRootAsync()`.',
    '',
    ...table('extras'),
    '',
    '## Module options',
    '',
    'What `forRoot()` takes, or what the `forRootAsync()` factory returns. Nested option objects are',
    'listed field by field (`limits.maxBatchLength`); an option whose type is an object not listed so',
    'is described by its type.',
    '',
    ...table('options'),
    '',
  ].join('\n');
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const mode = process.argv[2];
  const rows = collectOptions();
  if (mode === '--list') {
    process.stdout.write(JSON.stringify(rows.map((row) => row.path)) + '\n');
  } else if (mode === '--check') {
    const expected = render(rows);
    const actual = readFileSync(PAGE, 'utf8');
    if (actual !== expected) {
      const a = actual.split('\n');
      const e = expected.split('\n');
      const line = e.findIndex((text, i) => text !== a[i]);
      console.error(
        `docs/options.md differs from what the options types generate, first at line ${line + 1}:\n  page:      ${a[line]}\n  generated: ${e[line]}\nRun: node scripts/gen-options-doc.mjs`,
      );
      process.exit(1);
    }
  } else {
    writeFileSync(PAGE, render(rows));
    console.log(`docs/options.md: ${rows.length} options`);
  }
}
