/**
 * Swagger-documented DTOs as enterprise apps write them: response DTOs with `@ApiProperty()` only
 * (no class-validator), used as a tool's `output` and as an exposed route's `@ApiOkResponse({ type })`,
 * and an argument DTO with `@ApiProperty()` only. Their schemas come from the Swagger metadata, so
 * successful calls pass the output check on both eras; what the emitter cannot describe fails the
 * bootstrap naming the class and property. Official clients of both eras.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Controller, Get, Injectable, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Args, McpModule, Tool } from '../../lib/index.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';
import { ApiOkResponse, ApiProperty, ApiPropertyOptional } from '../utils/swagger.js';

type Json = Record<string, any>;

class AddressView {
  @ApiProperty({ example: 'Lyon' }) city!: string;
  @ApiPropertyOptional() zip?: string;
}

class CustomerView {
  @ApiProperty({ description: 'Customer id', format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'integer' }) orders!: number;
  @ApiProperty({ type: [String] }) tags!: string[];
  @ApiProperty({ type: () => AddressView }) address!: AddressView;
  @ApiProperty({ nullable: true, type: String }) note!: string | null;
}

class CustomerRef {
  @ApiProperty({ description: 'The customer id' }) id!: string;
}

const ADA: CustomerView = {
  id: '7c0e3f3e-1b7a-4c55-9a57-2a3c4f1d9b10',
  name: 'Ada',
  orders: 3,
  tags: ['vip'],
  address: { city: 'Lyon' },
  note: null,
};

@Controller('customers')
class CustomersController {
  @Get(':id')
  @ApiOkResponse({ type: CustomerView })
  findOne(@Param('id') id: string): CustomerView {
    return { ...ADA, id };
  }
}

@Injectable()
class CustomerTools {
  @Tool({ description: 'One customer by id.', output: CustomerView })
  getCustomer(@Args() ref: CustomerRef): CustomerView {
    return { ...ADA, id: ref.id };
  }
}

@Module({
  imports: [
    McpModule.forRoot({
      name: 'swagger-dtos',
      version: '1.0.0',
      expose: { routes: [{ controllers: [CustomersController] }] },
    }),
  ],
  controllers: [CustomersController],
  providers: [CustomerTools],
})
class SwaggerModule {}

const eras = [
  {
    era: '2025-11-25',
    connect: (url: string) => connectSdkClient(url) as Promise<{ client: Json; close(): Promise<void> }>,
  },
  {
    era: '2026-07-28',
    connect: (url: string) => connectModernClient(url) as Promise<{ client: Json; close(): Promise<void> }>,
  },
];

describe('Swagger-only DTOs', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(SwaggerModule);
  });
  after(() => server.close());

  for (const { era, connect } of eras) {
    describe(era, () => {
      it('lists the output schema @ApiProperty() describes, for a tool and for a route', async () => {
        const connection = await connect(server.url);
        try {
          const { tools } = (await connection.client.listTools()) as { tools: Json[] };
          for (const name of ['get_customer', 'find_one']) {
            const tool = tools.find((t) => t.name === name)!;
            assert.deepEqual(
              Object.keys(tool.outputSchema.properties),
              ['id', 'name', 'orders', 'tags', 'address', 'note'],
              name,
            );
            assert.deepEqual(tool.outputSchema.required, ['id', 'name', 'orders', 'tags', 'address', 'note']);
            assert.deepEqual(tool.outputSchema.properties.tags, { type: 'array', items: { type: 'string' } });
          }
          const getCustomer = tools.find((t) => t.name === 'get_customer')!;
          assert.deepEqual(getCustomer.inputSchema.properties.id, { description: 'The customer id', type: 'string' });
        } finally {
          await connection.close();
        }
      });

      for (const name of ['get_customer', 'find_one']) {
        it(`${name}: a successful call passes the output check and returns the structured result`, async () => {
          const connection = await connect(server.url);
          try {
            const result = (await connection.client.callTool({ name, arguments: { id: 'c-1' } })) as Json;
            assert.notEqual(result.isError, true, JSON.stringify(result.content));
            assert.deepEqual(result.structuredContent, { ...ADA, id: 'c-1' });
          } finally {
            await connection.close();
          }
        });
      }

      it('checks arguments of an @ApiProperty()-only DTO against its schema', async () => {
        const connection = await connect(server.url);
        try {
          const result = (await connection.client.callTool({
            name: 'get_customer',
            arguments: { id: 5, extra: true },
          })) as Json;
          assert.equal(result.isError, true);
          assert.match(result.content[0].text, /id: must be a string/);
          assert.match(result.content[0].text, /extra: is not an allowed property/);
        } finally {
          await connection.close();
        }
      });
    });
  }
});

describe('a Swagger DTO the emitter cannot describe', () => {
  it('fails the bootstrap naming the tool, the class and the property', async () => {
    class TaggedView {
      @ApiProperty() id!: string;
      @ApiProperty() tags!: string[];
    }
    @Injectable()
    class BadTools {
      @Tool({ description: 'Lists tags.', output: TaggedView })
      tagged(): TaggedView {
        return { id: '1', tags: [] };
      }
    }
    @Module({ imports: [McpModule.forRoot({ name: 'bad', version: '1' })], providers: [BadTools] })
    class BadModule {}
    const app = await NestFactory.create(BadModule, { logger: false });
    try {
      await assert.rejects(
        app.init(),
        /BadTools#tagged output.*"TaggedView\.tags": it is an array but @ApiProperty\(\) does not say of what.*type: \[String\]/,
      );
    } finally {
      await app.close();
    }
  });
});
