import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Exclude, Type } from 'class-transformer';
import { IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '../../test/utils/swagger.js';
import { DtoCaster } from './dto-caster.js';
import { JsonSchemaFactory } from './json-schema.factory.js';
import { generationError } from '../../test/utils/schema.js';

enum Status {
  Open = 'open',
  Closed = 'closed',
}

class AddressView {
  @ApiProperty({ description: 'City name', example: 'Lyon' }) city!: string;
  @ApiPropertyOptional() zip?: string;
}

class LineView {
  @ApiProperty() sku!: string;
  @ApiProperty({ type: 'integer', minimum: 1 }) quantity!: number;
}

/** A response DTO as Swagger users write it: @ApiProperty() only, no class-validator. */
class CustomerView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ maxLength: 80 }) name!: string;
  @ApiProperty() vip!: boolean;
  @ApiProperty() balance!: number;
  @ApiProperty() createdAt!: Date;
  @ApiProperty({ enum: Status }) status!: Status;
  @ApiProperty({ enum: Status, isArray: true }) history!: Status[];
  @ApiProperty({ type: [String] }) tags!: string[];
  @ApiProperty({ type: () => AddressView }) address!: AddressView;
  @ApiProperty({ type: () => [LineView] }) lines!: LineView[];
  @ApiProperty({ nullable: true, type: String }) note!: string | null;
  @ApiPropertyOptional({ description: 'Free-form extras' }) extras?: object;
}

describe('@ApiProperty metadata (read without @nestjs/swagger)', () => {
  it('describes a response DTO that has @ApiProperty() only', () => {
    const schema = new JsonSchemaFactory().createOutput(CustomerView);
    assert.deepEqual(schema, {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        name: { type: 'string', maxLength: 80 },
        vip: { type: 'boolean' },
        balance: { type: 'number' },
        createdAt: { type: 'string', format: 'date-time' },
        status: { type: 'string', enum: ['open', 'closed'] },
        history: { type: 'array', items: { type: 'string', enum: ['open', 'closed'] } },
        tags: { type: 'array', items: { type: 'string' } },
        address: {
          type: 'object',
          properties: {
            city: { description: 'City name', examples: ['Lyon'], type: 'string' },
            zip: { type: 'string' },
          },
          required: ['city'],
          additionalProperties: false,
        },
        lines: {
          type: 'array',
          items: {
            type: 'object',
            properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
            required: ['sku', 'quantity'],
            additionalProperties: false,
          },
        },
        note: { type: ['string', 'null'] },
        extras: { description: 'Free-form extras', type: 'object' },
      },
      required: ['id', 'name', 'vip', 'balance', 'createdAt', 'status', 'history', 'tags', 'address', 'lines', 'note'],
      additionalProperties: false,
    });
  });

  it('keeps class-validator as the source where it speaks, with @ApiProperty docs, and fills the rest from @ApiProperty', () => {
    class Mixed {
      @ApiProperty({ description: 'How many', example: 3 }) @IsInt() @Min(0) count!: number;
      @ApiProperty({ description: 'Label' }) label!: string;
    }
    const schema = new JsonSchemaFactory().createOutput(Mixed);
    assert.deepEqual(schema.properties, {
      count: { description: 'How many', examples: [3], type: 'integer', minimum: 0 },
      label: { description: 'Label', type: 'string' },
    });
    assert.deepEqual(schema.required, ['count', 'label']);
  });

  it('nests an @ApiProperty()-only class under a class-validator property of an output', () => {
    class Envelope {
      @ValidateNested() @Type(() => AddressView) address!: AddressView;
    }
    assert.deepEqual((new JsonSchemaFactory().createOutput(Envelope).properties as Record<string, unknown>).address, {
      type: 'object',
      properties: { city: { description: 'City name', examples: ['Lyon'], type: 'string' }, zip: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    });
    // Arguments are validated by class-validator, which refuses a nested class it has no rules for.
    assert.match(
      generationError(() => new JsonSchemaFactory().create(Envelope)).message,
      /"Envelope\.address".*no class-validator decorators/,
    );
  });

  it('reads the metadata factory the Swagger CLI plugin generates, under the decorators', () => {
    class PluginView {
      @ApiProperty({ description: 'Shown name' }) name!: string;
      age?: number;
      static _OPENAPI_METADATA_FACTORY() {
        return { name: { required: true, type: () => String }, age: { required: false, type: () => Number } };
      }
    }
    assert.deepEqual(new JsonSchemaFactory().createOutput(PluginView), {
      type: 'object',
      properties: { name: { description: 'Shown name', type: 'string' }, age: { type: 'number' } },
      required: ['name'],
      additionalProperties: false,
    });
  });

  it('puts a recursive @ApiProperty class under $defs', () => {
    class Category {
      @ApiProperty() name!: string;
      @ApiProperty({ type: () => [Category] }) children!: Category[];
    }
    const schema = new JsonSchemaFactory().createOutput(Category);
    assert.deepEqual((schema.properties as Record<string, unknown>).children, {
      type: 'array',
      items: { $ref: '#/$defs/Category' },
    });
    assert.ok((schema.$defs as Record<string, unknown>).Category);
  });

  describe('refuses at bootstrap what it cannot describe, naming Class.property', () => {
    it('an array whose item type @ApiProperty() does not give', () => {
      class Bare {
        @ApiProperty() tags!: string[];
      }
      assert.match(
        generationError(() => new JsonSchemaFactory().createOutput(Bare)).message,
        /"Bare\.tags".*type: \[String\]/,
      );
    });

    it('a property only @Type() tells of', () => {
      class WithTyped {
        @ApiProperty() id!: string;
        @Type(() => AddressView) address!: AddressView;
      }
      assert.match(
        generationError(() => new JsonSchemaFactory().createOutput(WithTyped)).message,
        /"WithTyped\.address": only @Type\(\)/,
      );
    });

    it('a class no decorator describes, instead of an empty closed object', () => {
      class Plain {
        id!: string;
      }
      assert.match(
        generationError(() => new JsonSchemaFactory().createOutput(Plain)).message,
        /"Plain": no property of it is described/,
      );
    });

    it('a Swagger $ref, which no tool schema can resolve', () => {
      class Refs {
        @ApiProperty({ type: 'array', items: { $ref: '#/components/schemas/Line' } }) lines!: unknown[];
      }
      assert.match(
        generationError(() => new JsonSchemaFactory().createOutput(Refs)).message,
        /"Refs\.lines".*#\/components\/schemas\/Line/,
      );
    });

    it('an @ApiProperty()-only property of an argument class that class-validator validates', () => {
      class HalfValidated {
        @IsString() name!: string;
        @ApiProperty() nickname!: string;
      }
      assert.match(
        generationError(() => new JsonSchemaFactory().create(HalfValidated)).message,
        /"HalfValidated\.nickname".*@ApiProperty.*no class-validator decorator/,
      );
    });
  });

  it('leaves out of the output schema what class-transformer excludes from plain output', () => {
    class Account {
      @ApiProperty() id!: string;
      @Exclude() password!: string;
    }
    assert.deepEqual(Object.keys(new JsonSchemaFactory().createOutput(Account).properties as object), ['id']);
  });

  it('takes an argument class with @ApiProperty() only as its schema, and checks arguments against it', async () => {
    class SearchArgs {
      @ApiProperty({ minLength: 1 }) query!: string;
      @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 50 }) limit?: number;
    }
    const factory = new JsonSchemaFactory();
    assert.deepEqual(factory.create(SearchArgs), {
      type: 'object',
      properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: 50 } },
      required: ['query'],
      additionalProperties: false,
    });
    const cast = new DtoCaster(factory).compile(SearchArgs);
    const ok = await cast({ query: 'lamps', limit: 5 });
    assert.ok(ok.ok && ok.value instanceof SearchArgs && ok.value.query === 'lamps');
    const bad = await cast({ query: '', limit: 99, extra: true });
    assert.equal(bad.ok, false);
    assert.deepEqual((bad as { issues: { path: string }[] }).issues.map((issue) => issue.path).sort(), [
      'extra',
      'limit',
      'query',
    ]);
  });
});
