import { McpMethods } from '../protocol/methods.js';
import { toolParameters, type McpCatalog, type McpCatalogCoverage, type McpLintFinding } from './catalog.js';

type Json = Record<string, any>;

/**
 * The catalog as a readable reference: per tool its title, description, parameter table,
 * annotations, output schema and an example call; then resources, templates and prompts.
 *
 * @publicApi
 */
export function renderCatalogMarkdown(
  catalog: McpCatalog,
  report?: {
    coverage: McpCatalogCoverage;
    findings: McpLintFinding[];
    /** Entries the listing caller was not shown. */ hidden?: number;
  },
  heading = 'MCP catalog',
): string {
  const out: string[] = [`# ${heading}`, ''];
  if (report) {
    const hidden = report.hidden
      ? ` · **${report.hidden}** item(s) hidden from the caller that listed it: this catalog is partial`
      : '';
    out.push(
      `Description coverage: **${report.coverage.percent}%** · lint warnings: **${report.findings.length}**${hidden}`,
      '',
    );
  }
  out.push(`## Tools (${catalog.tools.length})`, '');
  for (const tool of catalog.tools) out.push(...toolSection(tool));
  out.push(`## Resources (${catalog.resources.length})`, '');
  if (catalog.resources.length > 0) {
    out.push('| URI | Name | Title | MIME type | Description |', '| --- | --- | --- | --- | --- |');
    for (const r of catalog.resources) out.push(row([code(r.uri), r.name, r.title, r.mimeType, r.description]));
    out.push('');
  }
  out.push(`## Resource templates (${catalog.resourceTemplates.length})`, '');
  if (catalog.resourceTemplates.length > 0) {
    out.push('| URI template | Name | Title | MIME type | Description |', '| --- | --- | --- | --- | --- |');
    for (const t of catalog.resourceTemplates)
      out.push(row([code(t.uriTemplate), t.name, t.title, t.mimeType, t.description]));
    out.push('');
  }
  out.push(`## Prompts (${catalog.prompts.length})`, '');
  for (const prompt of catalog.prompts) {
    out.push(`### ${prompt.title ? `${prompt.title} (\`${prompt.name}\`)` : `\`${prompt.name}\``}`, '');
    if (prompt.description) out.push(String(prompt.description), '');
    const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
    if (args.length > 0) {
      out.push('| Argument | Required | Description |', '| --- | --- | --- |');
      for (const a of args) out.push(row([code(a.name), a.required ? 'yes' : 'no', a.description]));
      out.push('');
    }
  }
  if (report && (report.findings.length > 0 || report.coverage.undocumented.length > 0)) {
    out.push('## Lint', '');
    for (const f of report.findings) out.push(`- \`${f.rule}\` ${escapeCell(f.message)}`);
    out.push('');
  }
  return out.join('\n');
}

function toolSection(tool: Json): string[] {
  const out = [`### ${tool.title ? `${tool.title} (\`${tool.name}\`)` : `\`${tool.name}\``}`, ''];
  if (tool.description) out.push(String(tool.description), '');
  const params = toolParameters(tool);
  if (params.length === 0) out.push('No parameters.', '');
  else {
    out.push('| Parameter | Type | Required | Default | Enum | Description |', '| --- | --- | --- | --- | --- | --- |');
    for (const p of params) {
      const enumValues = Array.isArray(p.schema.enum)
        ? p.schema.enum.map((v: unknown) => code(JSON.stringify(v))).join(', ')
        : '';
      const def = 'default' in p.schema ? code(JSON.stringify(p.schema.default)) : '';
      out.push(row([code(p.name), typeOf(p.schema), p.required ? 'yes' : 'no', def, enumValues, p.description]));
    }
    out.push('');
  }
  if (tool.annotations && Object.keys(tool.annotations).length > 0) {
    out.push(
      'Annotations: ' +
        Object.entries(tool.annotations)
          .map(([k, v]) => `\`${k}: ${JSON.stringify(v)}\``)
          .join(', '),
      '',
    );
  }
  if (tool.outputSchema)
    out.push('Output schema:', '', '```json', JSON.stringify(tool.outputSchema, null, 2), '```', '');
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: McpMethods.toolsCall.name,
    params: { name: tool.name, arguments: exampleOf(tool.inputSchema ?? {}) },
  };
  out.push('Example call:', '', '```json', JSON.stringify(call, null, 2), '```', '');
  return out;
}

/** A value the schema accepts, for the example call: default, example, enum, else by type. */
export function exampleOf(schema: Json, depth = 0): unknown {
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      for (const [name, child] of Object.entries((schema.properties ?? {}) as Json)) {
        if (depth < 4 && (required.has(name) || depth === 0)) out[name] = exampleOf(child as Json, depth + 1);
      }
      return out;
    }
    case 'array':
      return schema.items && depth < 4 ? [exampleOf(schema.items, depth + 1)] : [];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'string':
      return stringExample(schema);
    default:
      return null;
  }
}

function stringExample(schema: Json): string {
  switch (schema.format) {
    case 'date-time':
      return '2026-01-01T00:00:00Z';
    case 'date':
      return '2026-01-01';
    case 'email':
      return 'user@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    default: {
      const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
      return 'text'.padEnd(min, 'x');
    }
  }
}

function typeOf(schema: Json): string {
  const type = Array.isArray(schema.type) ? schema.type.join(' \\| ') : (schema.type ?? 'any');
  if (type === 'array' && schema.items?.type) return `${String(schema.items.type)}[]`;
  return schema.format ? `${String(type)} (${String(schema.format)})` : String(type);
}

function code(value: unknown): string {
  return value === undefined ? '' : `\`${String(value).replace(/`/g, "'")}\``;
}

function row(cells: unknown[]): string {
  return `| ${cells.map((c) => (c === undefined || c === null ? '' : escapeCell(String(c)))).join(' | ')} |`;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * Findings as GitHub Actions workflow commands (`::warning title=…::message`), one per line, and
 * a summary line; the runner shows them as annotations on the job.
 *
 * @publicApi
 */
export function renderGithubAnnotations(coverage: McpCatalogCoverage, findings: McpLintFinding[], hidden = 0): string {
  const lines = findings.map((f) => `::warning title=MCP catalog ${escapeProperty(f.rule)}::${escapeData(f.message)}`);
  if (hidden > 0)
    lines.push(
      `::error title=MCP catalog hidden::${hidden} item(s) were hidden from the caller that listed the catalog: coverage and lint judge a partial catalog.`,
    );
  lines.push(
    `::notice title=MCP catalog::description coverage ${coverage.percent}%, ${findings.length} lint warning(s)`,
  );
  return lines.join('\n');
}

function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
