import 'reflect-metadata';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsInt, IsNumber, IsOptional, IsString, ValidateNested } from 'class-validator';
import { of } from 'rxjs';
import { ToolRuntimeFactory } from '../tools/tool-runtime.factory.js';
import { McpModule } from '../mcp.module.js';
import { SchemaProperty } from '../schema/schema-property.decorator.js';
import { Args } from './params.decorators.js';
import { McpHeader } from './mcp-header.decorator.js';
import { Tool } from '../tools/tool.decorator.js';

class Location {
  @McpHeader('Zone')
  @IsString()
  zone!: string;
}

class ForecastDto {
  @McpHeader('Region')
  @IsString()
  region!: string;

  @McpHeader('Days')
  @IsOptional()
  @IsInt()
  days?: number;

  @McpHeader('Metric')
  @IsOptional()
  @IsBoolean()
  metric?: boolean;

  @IsOptional()
  @ValidateNested()
  @Type(() => Location)
  location?: Location;

  @McpHeader('Note')
  @SchemaProperty({ description: 'free text', schema: { maxLength: 40 } })
  @IsOptional()
  @IsString()
  note?: string;
}

class NumberHeaderDto {
  @McpHeader('Ratio')
  @IsNumber()
  ratio!: number;
}

class NestedInArrayDto {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Location)
  places!: Location[];
}

class DuplicateDto {
  @McpHeader('Tenant')
  @IsString()
  a!: string;

  @McpHeader('tenant')
  @IsString()
  b!: string;
}

class BadNameDto {
  @McpHeader('Not A Token')
  @IsString()
  a!: string;
}

const build = (input: Function) =>
  new ToolRuntimeFactory().build({ name: 'forecast', input: input as never }, () => of('x'), 'Fixture#forecast');

describe('@McpHeader', () => {
  it('marks string, integer and boolean properties with x-mcp-header, also in nested DTOs', () => {
    const runtime = build(ForecastDto);
    const properties = runtime.descriptors.modern.inputSchema.properties as Record<string, Record<string, unknown>>;
    assert.equal(properties.region['x-mcp-header'], 'Region');
    assert.equal(properties.days['x-mcp-header'], 'Days');
    assert.equal(properties.metric['x-mcp-header'], 'Metric');
    assert.equal(
      (properties.location.properties as Record<string, Record<string, unknown>>).zone['x-mcp-header'],
      'Zone',
    );
    assert.deepEqual(
      runtime.headerParams?.map((p) => [p.path.join('.'), p.header, p.type]),
      [
        ['region', 'Region', 'string'],
        ['days', 'Days', 'integer'],
        ['metric', 'Metric', 'boolean'],
        ['location.zone', 'Zone', 'string'],
        ['note', 'Note', 'string'],
      ],
    );
  });

  it('merges with a raw schema from @SchemaProperty written below it', () => {
    const note = (
      build(ForecastDto).descriptors.modern.inputSchema.properties as Record<string, Record<string, unknown>>
    ).note;
    assert.equal(note.maxLength, 40);
    assert.equal(note.description, 'free text');
    assert.equal(note['x-mcp-header'], 'Note');
  });

  it('fails the bootstrap on a number property', () => {
    assert.throws(
      () => build(NumberHeaderDto),
      /Fixture#forecast.*"ratio" is not a string, integer or boolean property/,
    );
  });

  it('fails the bootstrap on a duplicate name, ignoring case', () => {
    assert.throws(() => build(DuplicateDto), /header name "tenant" is used twice/);
  });

  it('fails the bootstrap on a name that is not an HTTP token', () => {
    assert.throws(() => build(BadNameDto), /"a" needs a non-empty token name/);
  });

  // collectHeaderParams (lib/tools/tool-runtime.factory.ts) walks `properties` only, so a mark
  // inside array items is ignored instead of refused; the fix belongs there (reported to the lead).
  it('fails the bootstrap inside array items (not reachable through properties alone)', () => {
    assert.throws(() => build(NestedInArrayDto), /x-mcp-header/);
  });
});

@Injectable()
class ForecastTools {
  @Tool({ description: 'Forecast.' })
  forecast(@Args() input: ForecastDto): string {
    return `${input.region}/${input.days ?? '-'}/${input.metric ?? '-'}`;
  }
}

@Module({ imports: [McpModule.forRoot({ name: 'headers', version: '1.0.0' })], providers: [ForecastTools] })
class HeadersModule {}

describe('@McpHeader on the wire (2026-07-28)', () => {
  let app: INestApplication;
  let url: string;
  before(async () => {
    app = await NestFactory.create(HeadersModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/mcp`;
  });
  after(() => app.close());

  const callForecast = async (args: Record<string, unknown>, headers: Record<string, string>) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'forecast',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'forecast',
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  it('accepts matching headers: literal, base64 and numeric', async () => {
    const ok = await callForecast(
      { region: 'eu-west', days: 3, metric: true },
      { 'Mcp-Param-Region': 'eu-west', 'Mcp-Param-Days': '03', 'Mcp-Param-Metric': 'true' },
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.result.content[0].text, 'eu-west/3/true');
    const encoded = `=?base64?${Buffer.from('Zürich').toString('base64')}?=`;
    const b64 = await callForecast({ region: 'Zürich' }, { 'Mcp-Param-Region': encoded });
    assert.equal(b64.status, 200, JSON.stringify(b64.body));
  });

  for (const [label, args, headers] of [
    ['a mismatch', { region: 'eu-west' }, { 'Mcp-Param-Region': 'us-east' }],
    ['a missing header while the argument is present', { region: 'eu-west' }, {}],
    ['a numeric mismatch', { region: 'eu', days: 3 }, { 'Mcp-Param-Region': 'eu', 'Mcp-Param-Days': '4' }],
    ['malformed base64', { region: 'eu' }, { 'Mcp-Param-Region': '=?base64?%%%?=' }],
  ] as const) {
    it(`answers 400 with -32020 on ${label}`, async () => {
      const res = await callForecast(args, headers);
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, -32020);
    });
  }
});
