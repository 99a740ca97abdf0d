/**
 * The catalog an MCP server offers, and the checks a CI runs on it: description coverage and
 * lint findings. Plain data in, plain data out: no Nest, no I/O, so a CLI, a test or a custom
 * script can run the same checks on lists taken from any server.
 */

type Json = Record<string, any>;

/**
 * What `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` return
 * (every page, in order).
 *
 * @publicApi
 */
export interface McpCatalog {
  tools: Json[];
  resources: Json[];
  resourceTemplates: Json[];
  prompts: Json[];
}

/** Described / total for one kind of catalog entry. @publicApi */
export interface McpCoverageCount {
  described: number;
  total: number;
}

/**
 * Share of the catalog that carries a description: tools, parameters (tool input properties,
 * nested ones included, and prompt arguments), resources, templates and prompts.
 *
 * @publicApi
 */
export interface McpCatalogCoverage {
  tools: McpCoverageCount;
  parameters: McpCoverageCount;
  resources: McpCoverageCount;
  resourceTemplates: McpCoverageCount;
  prompts: McpCoverageCount;
  /** Every entry above together, as a percentage (100 when the catalog is empty). */
  percent: number;
  /** Where a description is missing, e.g. `tool build_report, parameter title`. */
  undocumented: string[];
}

/** One lint finding. @publicApi */
export interface McpLintFinding {
  /** The rule, e.g. `schema-unportable`, `name-ambiguous`, `description-missing`. */
  rule: string;
  /** What it is about, e.g. `tool build_report` or `tool build_report, parameter title`. */
  target: string;
  message: string;
}

/**
 * Bounds of the description rules.
 *
 * @publicApi
 */
export interface McpLintOptions {
  /** Shorter descriptions are reported as too short. @default 10 */
  minDescriptionLength?: number;
  /** Longer tool, resource and prompt descriptions are reported as too long. @default 1024 */
  maxDescriptionLength?: number;
  /** Longer parameter descriptions are reported as too long. @default 300 */
  maxParameterDescriptionLength?: number;
  /**
   * Where each tool was declared, by name, so that advice names the place to fix it: a `@Tool()`
   * method (the default), an exposed route, a CQRS message, or `McpRegistry.addTool()`.
   */
  toolSources?: Record<string, McpToolSource>;
}

/**
 * Where a tool comes from: a `@Tool()` method, a controller route exposed with `@ExposeRoute()`
 * or `expose.routes`, a CQRS command or query of `expose.commands` / `expose.queries`, or
 * `McpRegistry.addTool()`.
 *
 * @publicApi
 */
export type McpToolSource = 'tool' | 'route' | 'message' | 'runtime';

/** Where a tool of each source takes its title, annotations and description. */
const TOOL_OPTIONS_PLACE: Record<McpToolSource, string> = {
  tool: 'on @Tool()',
  route:
    'in @ExposeRoute({ ... }) on the route, or in its expose.routes entry (tools: { <handler or "VERB /path">: { ... } })',
  message: 'in its expose.commands / expose.queries entry ({ message, ... })',
  runtime: 'in McpRegistry.addTool({ ... })',
};

/** Where a parameter of a tool of each source takes its description. */
const PARAMETER_PLACE: Record<McpToolSource, string> = {
  tool: 'add @SchemaProperty({ description }) on the DTO property',
  route:
    'describe the DTO property (@SchemaProperty or @ApiProperty({ description })), or, for a path or query argument, give argumentDescriptions in @ExposeRoute() or the expose.routes entry',
  message: 'add @SchemaProperty({ description }) on the message class property',
  runtime: 'give the property a description in the input schema passed to McpRegistry.addTool()',
};

/**
 * Tool and prompt names every popular client and model API takes (the function-name rule of the
 * large model APIs): letters, digits, `_` and `-`, at most 64.
 */
export const PORTABLE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** What the MCP specification allows for a tool name (2025-11-25): adds `.`, at most 128. */
export const SPEC_TOOL_NAME = /^[a-zA-Z0-9_.-]{1,128}$/;

/**
 * JSON Schema keywords that popular clients reject or mangle in a tool's input schema: function
 * calling APIs take a subset of JSON Schema, and some drop or refuse references, combinators and
 * conditionals, so a model never sees the constraint or the tool fails to register.
 */
const UNPORTABLE_KEYWORDS: Record<string, string> = {
  $ref: 'references are not resolved by several clients; inline the schema',
  $defs: 'definitions are dropped by clients that do not resolve $ref; inline the schema',
  definitions: 'definitions are dropped by clients that do not resolve $ref; inline the schema',
  oneOf:
    'combinators are refused or flattened by several function-calling APIs; use one object with optional properties or an enum',
  anyOf:
    'combinators are refused or flattened by several function-calling APIs; use one object with optional properties or an enum',
  allOf: 'combinators are refused or flattened by several function-calling APIs; merge the schemas',
  not: '"not" is refused by several function-calling APIs',
  if: 'conditionals (if/then/else) are ignored or refused by function-calling APIs',
  then: 'conditionals (if/then/else) are ignored or refused by function-calling APIs',
  else: 'conditionals (if/then/else) are ignored or refused by function-calling APIs',
  patternProperties: 'patternProperties is refused by several function-calling APIs; use named properties',
  dependentSchemas: 'dependentSchemas is ignored by function-calling APIs',
  dependentRequired: 'dependentRequired is ignored by function-calling APIs',
  dependencies: 'dependencies is ignored by function-calling APIs',
  prefixItems: 'tuples (prefixItems) are refused by several function-calling APIs; use an object',
  unevaluatedProperties: 'unevaluatedProperties is refused by several function-calling APIs',
  propertyNames: 'propertyNames is refused by several function-calling APIs',
};

const KINDS = ['tools', 'resources', 'resourceTemplates', 'prompts'] as const;
const KIND_NAMES: Record<(typeof KINDS)[number], string> = {
  tools: 'tool',
  resources: 'resource',
  resourceTemplates: 'resource template',
  prompts: 'prompt',
};

/** One parameter of a tool or prompt, as the catalog lists it. @publicApi */
export interface McpCatalogParameter {
  /** Dotted path for nested properties (`filter.status`), `[]` for array items. */
  name: string;
  schema: Json;
  required: boolean;
  description?: string;
}

/** The parameters of a tool's input schema: top-level properties, then nested ones. @publicApi */
export function toolParameters(tool: Json): McpCatalogParameter[] {
  const out: McpCatalogParameter[] = [];
  walkProperties(isRecord(tool.inputSchema) ? tool.inputSchema : {}, '', out);
  return out;
}

function walkProperties(schema: Json, prefix: string, out: McpCatalogParameter[]): void {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [name, child] of Object.entries(properties)) {
    if (!isRecord(child)) continue;
    const path = prefix ? `${prefix}.${name}` : name;
    out.push({ name: path, schema: child, required: required.has(name), description: textOf(child.description) });
    walkProperties(child, path, out);
    if (isRecord(child.items)) walkProperties(child.items, `${path}[]`, out);
  }
}

/** Coverage of descriptions over the whole catalog. @publicApi */
export function catalogCoverage(catalog: McpCatalog): McpCatalogCoverage {
  const undocumented: string[] = [];
  const count = (items: Json[], kind: (typeof KINDS)[number]): McpCoverageCount => {
    let described = 0;
    for (const item of items) {
      if (textOf(item.description)) described++;
      else undocumented.push(`${KIND_NAMES[kind]} ${labelOf(item)}`);
    }
    return { described, total: items.length };
  };
  const tools = count(catalog.tools, 'tools');
  const resources = count(catalog.resources, 'resources');
  const resourceTemplates = count(catalog.resourceTemplates, 'resourceTemplates');
  const prompts = count(catalog.prompts, 'prompts');
  const parameters: McpCoverageCount = { described: 0, total: 0 };
  for (const [owner, params] of parameterLists(catalog)) {
    for (const param of params) {
      parameters.total++;
      if (param.description) parameters.described++;
      else undocumented.push(`${owner}, parameter ${param.name}`);
    }
  }
  const all = [tools, parameters, resources, resourceTemplates, prompts];
  const total = all.reduce((sum, c) => sum + c.total, 0);
  const described = all.reduce((sum, c) => sum + c.described, 0);
  const percent = total === 0 ? 100 : Math.floor((described / total) * 10_000) / 100;
  return { tools, parameters, resources, resourceTemplates, prompts, percent, undocumented };
}

/** Tool parameters and prompt arguments, with the label of their owner. */
function parameterLists(catalog: McpCatalog): Array<[string, Array<{ name: string; description?: string }>]> {
  const lists: Array<[string, Array<{ name: string; description?: string }>]> = [];
  for (const tool of catalog.tools) lists.push([`tool ${labelOf(tool)}`, toolParameters(tool)]);
  for (const prompt of catalog.prompts) {
    const args = Array.isArray(prompt.arguments) ? prompt.arguments.filter(isRecord) : [];
    lists.push([
      `prompt ${labelOf(prompt)}`,
      args.map((a) => ({ name: String(a.name), description: textOf(a.description) })),
    ]);
  }
  return lists;
}

/**
 * Lint findings on the catalog: unportable schema constructs, names outside the portable pattern
 * or the specification's, names that differ only by case or separator, descriptions that are
 * missing, too short, too long or shared, tools without `title` or annotations.
 *
 * @publicApi
 */
export function lintCatalog(catalog: McpCatalog, options: McpLintOptions = {}): McpLintFinding[] {
  const findings: McpLintFinding[] = [];
  const min = options.minDescriptionLength ?? 10;
  const max = options.maxDescriptionLength ?? 1024;
  const maxParam = options.maxParameterDescriptionLength ?? 300;
  const add = (rule: string, target: string, message: string): void => void findings.push({ rule, target, message });

  for (const tool of catalog.tools) {
    const target = `tool ${labelOf(tool)}`;
    const source = options.toolSources?.[String(tool.name)] ?? 'tool';
    const place = TOOL_OPTIONS_PLACE[source];
    lintName(String(tool.name ?? ''), target, true, add);
    if (!textOf(tool.title))
      add('title-missing', target, `${target} has no title: clients show the raw name; set { title } ${place}.`);
    if (!isRecord(tool.annotations) || Object.keys(tool.annotations).length === 0) {
      add(
        'annotations-missing',
        target,
        `${target} has no annotations: clients cannot tell whether it only reads or changes data; set { annotations: { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } } ${place}.`,
      );
    }
    const schema = isRecord(tool.inputSchema) ? tool.inputSchema : undefined;
    if (!schema || schema.type !== 'object')
      add(
        'schema-unportable',
        target,
        `${target}: the input schema must be { "type": "object" } at the top; clients refuse other roots.`,
      );
    if (schema) lintSchema(schema, `${target}, input schema`, add);
    for (const param of toolParameters(tool)) {
      const where = `${target}, parameter ${param.name}`;
      if (!param.description)
        add(
          'description-missing',
          where,
          `${where} has no description: the model guesses what to pass; ${PARAMETER_PLACE[source]}.`,
        );
      else lintLength(param.description, where, min, maxParam, add);
    }
  }
  for (const kind of KINDS) {
    for (const item of catalog[kind]) {
      const target = `${KIND_NAMES[kind]} ${labelOf(item)}`;
      if (kind === 'prompts') lintName(String(item.name ?? ''), target, false, add);
      const description = textOf(item.description);
      const place =
        kind === 'tools' ? TOOL_OPTIONS_PLACE[options.toolSources?.[String(item.name)] ?? 'tool'] : 'on its decorator';
      if (!description)
        add('description-missing', target, `${target} has no description: set { description } ${place}.`);
      else lintLength(description, target, min, max, add);
      if (kind !== 'tools' && !textOf(item.title))
        add(
          'title-missing',
          target,
          `${target} has no title: clients show the raw name; set { title } on its decorator.`,
        );
    }
  }
  for (const prompt of catalog.prompts) {
    for (const arg of Array.isArray(prompt.arguments) ? prompt.arguments.filter(isRecord) : []) {
      const where = `prompt ${labelOf(prompt)}, argument ${String(arg.name)}`;
      const description = textOf(arg.description);
      if (!description) add('description-missing', where, `${where} has no description: add one to the argument.`);
      else lintLength(description, where, min, maxParam, add);
    }
  }
  lintAmbiguousNames(catalog.tools, 'tool', add);
  lintAmbiguousNames(catalog.prompts, 'prompt', add);
  lintDuplicateDescriptions(catalog, add);
  return findings;
}

type Add = (rule: string, target: string, message: string) => void;

function lintName(name: string, target: string, tool: boolean, add: Add): void {
  if (tool && !SPEC_TOOL_NAME.test(name)) {
    add(
      'name-spec',
      target,
      `${target}: the name is outside the specification's tool-name rule ${SPEC_TOOL_NAME.source} (letters, digits, "_", "-", ".", 1 to 128).`,
    );
  } else if (!PORTABLE_NAME.test(name)) {
    add(
      'name-portable',
      target,
      `${target}: the name is outside the portable pattern ${PORTABLE_NAME.source}; several clients and model APIs refuse it. Use letters, digits, "_" and "-", at most 64.`,
    );
  }
}

function lintLength(description: string, target: string, min: number, max: number, add: Add): void {
  if (description.length < min)
    add(
      'description-short',
      target,
      `${target}: the description "${description}" is shorter than ${min} characters; say what it does and when to use it.`,
    );
  else if (description.length > max)
    add(
      'description-long',
      target,
      `${target}: the description has ${description.length} characters, more than ${max}; clients truncate it.`,
    );
}

/** Walks a schema and reports every unportable keyword and `type` array once per place. */
function lintSchema(schema: Json, where: string, add: Add, path = ''): void {
  for (const [keyword, value] of Object.entries(schema)) {
    const reason = UNPORTABLE_KEYWORDS[keyword];
    if (reason) add('schema-unportable', where, `${where}${path ? ` at ${path}` : ''}: "${keyword}": ${reason}.`);
    if (keyword === 'type' && Array.isArray(value)) {
      add(
        'schema-unportable',
        where,
        `${where}${path ? ` at ${path}` : ''}: "type" is an array (${JSON.stringify(value)}); several clients take one type only: make the property optional instead of nullable.`,
      );
    }
  }
  const children: Array<[string, unknown]> = [];
  if (isRecord(schema.properties))
    for (const [name, child] of Object.entries(schema.properties)) children.push([`${path}/${name}`, child]);
  if (isRecord(schema.items)) children.push([`${path}[]`, schema.items]);
  if (isRecord(schema.additionalProperties)) children.push([`${path}{}`, schema.additionalProperties]);
  for (const keyword of ['oneOf', 'anyOf', 'allOf']) {
    if (Array.isArray(schema[keyword]))
      schema[keyword].forEach((child: unknown, i: number) => children.push([`${path}/${keyword}[${i}]`, child]));
  }
  for (const [childPath, child] of children) if (isRecord(child)) lintSchema(child, where, add, childPath);
}

/** Names equal once case and separators (`_`, `-`, `.`, spaces) are ignored. */
function lintAmbiguousNames(items: Json[], kind: string, add: Add): void {
  const byKey = new Map<string, string[]>();
  for (const item of items) {
    const name = String(item.name ?? '');
    const key = name.toLowerCase().replace(/[-_. ]/g, '');
    byKey.set(key, [...(byKey.get(key) ?? []), name]);
  }
  for (const names of byKey.values()) {
    const distinct = [...new Set(names)];
    if (distinct.length > 1) {
      add(
        'name-ambiguous',
        `${kind} ${distinct[0]}`,
        `${kind}s ${distinct.map((n) => `"${n}"`).join(', ')} differ only by case or separator: a model mixes them up; rename one.`,
      );
    } else if (names.length > 1) {
      add('name-duplicate', `${kind} ${distinct[0]}`, `${kind} "${distinct[0]}" is listed ${names.length} times.`);
    }
  }
}

/** The same description on two entries: a model cannot tell them apart. */
function lintDuplicateDescriptions(catalog: McpCatalog, add: Add): void {
  const seen = new Map<string, string[]>();
  for (const kind of KINDS) {
    for (const item of catalog[kind]) {
      const description = textOf(item.description);
      if (!description) continue;
      const key = description.trim().toLowerCase();
      seen.set(key, [...(seen.get(key) ?? []), `${KIND_NAMES[kind]} ${labelOf(item)}`]);
    }
  }
  for (const targets of seen.values()) {
    if (targets.length > 1)
      add(
        'description-duplicate',
        targets[0],
        `${targets.join(', ')} share one description: say what sets each apart.`,
      );
  }
}

/** The name a finding calls an entry by: its name, else its URI or URI template. */
export function labelOf(item: Json): string {
  return String(item.name ?? item.uri ?? item.uriTemplate ?? '(unnamed)');
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
