import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { catalogCoverage, lintCatalog, type McpCatalog } from './catalog.js';
import { exampleOf, renderCatalogMarkdown, renderGithubAnnotations } from './report.js';

const documented = {
  name: 'get_order',
  title: 'Get an order',
  description: 'Get one order by its id.',
  annotations: { readOnlyHint: true },
  inputSchema: {
    type: 'object',
    properties: { id: { type: 'string', description: 'The order id.' } },
    required: ['id'],
  },
};

function catalog(partial: Partial<McpCatalog>): McpCatalog {
  return { tools: [], resources: [], resourceTemplates: [], prompts: [], ...partial };
}

function rules(c: McpCatalog): string[] {
  return lintCatalog(c).map((f) => `${f.rule} ${f.target}`);
}

describe('catalog coverage and lint', () => {
  it('a documented catalog is 100% covered with no finding; an empty one too', () => {
    const c = catalog({
      tools: [documented],
      resources: [
        { uri: 'orders://index', name: 'orders', title: 'Orders', description: 'Every order, newest first.' },
      ],
      prompts: [
        {
          name: 'triage',
          title: 'Triage',
          description: 'Triage a support ticket.',
          arguments: [{ name: 'ticket', description: 'The ticket text.' }],
        },
      ],
    });
    assert.deepEqual(lintCatalog(c), []);
    const coverage = catalogCoverage(c);
    assert.equal(coverage.percent, 100);
    assert.deepEqual(coverage.parameters, { described: 2, total: 2 });
    assert.equal(catalogCoverage(catalog({})).percent, 100);
  });

  it('counts nested parameters and array items, and names each undocumented one', () => {
    const c = catalog({
      tools: [
        {
          ...documented,
          inputSchema: {
            type: 'object',
            properties: {
              filter: { type: 'object', description: 'Filter.', properties: { status: { type: 'string' } } },
              lines: {
                type: 'array',
                description: 'Lines of it.',
                items: { type: 'object', properties: { sku: { type: 'string' } } },
              },
            },
          },
        },
      ],
    });
    const coverage = catalogCoverage(c);
    assert.deepEqual(coverage.parameters, { described: 2, total: 4 });
    assert.deepEqual(coverage.undocumented, [
      'tool get_order, parameter filter.status',
      'tool get_order, parameter lines[].sku',
    ]);
    assert.equal(coverage.percent, 60);
  });

  it('tells the portable name pattern from the specification rule', () => {
    const c = catalog({
      tools: [
        { ...documented, name: 'orders.get' },
        { ...documented, name: 'get order', description: 'Another description.' },
        { ...documented, name: 'x'.repeat(65), description: 'A third description.' },
      ],
    });
    assert.deepEqual(
      rules(c).filter((r) => /^name-(portable|spec) /.test(r)),
      ['name-portable tool orders.get', 'name-spec tool get order', `name-portable tool ${'x'.repeat(65)}`],
    );
  });

  it('flags unportable keywords wherever they are, and a root that is not an object', () => {
    const c = catalog({
      tools: [
        {
          ...documented,
          inputSchema: {
            type: 'object',
            properties: {
              a: { description: 'A thing.', items: { oneOf: [{ type: 'string' }] }, type: 'array' },
              b: {
                description: 'B thing.',
                type: 'object',
                properties: { c: { description: 'C thing.', if: {}, then: {} } },
              },
            },
          },
        },
        { ...documented, name: 'other', description: 'Other description.', inputSchema: { type: 'string' } },
      ],
    });
    const messages = lintCatalog(c)
      .filter((f) => f.rule === 'schema-unportable')
      .map((f) => f.message);
    assert.equal(messages.length, 4);
    assert.match(messages[0], /at \/a\[\]: "oneOf"/);
    assert.match(messages[1], /at \/b\/c: "if"/);
    assert.match(messages[2], /at \/b\/c: "then"/);
    assert.match(messages[3], /tool other: the input schema must be \{ "type": "object" \}/);
  });

  it('flags names that differ by case or separator, repeated names, and shared descriptions across kinds', () => {
    const c = catalog({
      tools: [
        documented,
        { ...documented, name: 'Get-Order', description: 'Something else entirely.' },
        { ...documented, name: 'list', description: 'List the orders.' },
        { ...documented, name: 'list', description: 'List orders, again.' },
      ],
      prompts: [{ name: 'p', title: 'P', description: 'Get one order by its id.' }],
    });
    const found = rules(c);
    assert.ok(found.includes('name-ambiguous tool get_order'));
    assert.ok(found.includes('name-duplicate tool list'));
    assert.ok(found.includes('description-duplicate tool get_order'));
  });

  it('bounds description lengths (options change them)', () => {
    const c = catalog({ tools: [{ ...documented, description: 'x'.repeat(1025) }] });
    assert.deepEqual(rules(c), ['description-long tool get_order']);
    assert.deepEqual(lintCatalog(c, { maxDescriptionLength: 2000 }), []);
    assert.deepEqual(
      lintCatalog(c, { maxDescriptionLength: 2000, minDescriptionLength: 20 }).map((f) => f.rule),
      ['description-short'],
    );
  });

  it('examples satisfy the schema basics; Markdown escapes table cells; annotations escape workflow data', () => {
    assert.deepEqual(
      exampleOf({
        type: 'object',
        properties: {
          n: { type: 'integer', minimum: 5 },
          e: { enum: ['a', 'b'] },
          d: { type: 'string', format: 'date' },
          s: { type: 'string', minLength: 6 },
        },
      }),
      { n: 5, e: 'a', d: '2026-01-01', s: 'textxx' },
    );
    const md = renderCatalogMarkdown(
      catalog({
        tools: [
          {
            ...documented,
            inputSchema: { type: 'object', properties: { id: { type: 'string', description: 'a | b\nc' } } },
          },
        ],
      }),
    );
    assert.match(md, /\| `id` \| string \| no \| {2}\| {2}\| a \\\| b c \|/);
    const out = renderGithubAnnotations(catalogCoverage(catalog({})), [
      { rule: 'r:1', target: 't', message: '100%\nnext' },
    ]);
    assert.equal(out.split('\n')[0], '::warning title=MCP catalog r%3A1::100%25%0Anext');
  });
});
