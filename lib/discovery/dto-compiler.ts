import type { Type } from '@nestjs/common';
import type { JsonObject } from '../protocol/mcp-types.js';
import { DtoCaster, type Caster, type ClassConstructor, type DtoCasterOptions } from '../schema/dto-caster.js';
import { JsonSchemaFactory } from '../schema/json-schema.factory.js';
import * as messages from '../common/mcp.messages.js';

/**
 * Emits a DTO's schema and compiles its caster once, for tools, prompts and templates alike.
 * Schemas depend only on the class, so one cache serves every module of the process.
 */
export class DtoCompiler {
  readonly schemas: JsonSchemaFactory;
  readonly caster: DtoCaster;

  constructor(options: { nullableOptionals?: boolean } = {}) {
    this.schemas = new JsonSchemaFactory(options);
    this.caster = new DtoCaster(this.schemas);
  }

  compile(dto: Type<unknown>, site: string, options?: DtoCasterOptions): { schema: JsonObject; cast: Caster<object> } {
    try {
      return {
        schema: this.schemas.create(dto) as JsonObject,
        cast: this.caster.caster(dto as ClassConstructor<object>, options),
      };
    } catch (error) {
      throw new Error(messages.SCHEMA_FAILED(site, (error as Error).message));
    }
  }

  /** The input schema alone, for arguments something else validates (an exposed route's pipes). */
  schema(dto: Type<unknown>, site: string): JsonObject {
    try {
      return this.schemas.create(dto) as JsonObject;
    } catch (error) {
      throw new Error(messages.SCHEMA_FAILED(site, (error as Error).message));
    }
  }

  /** The schema a tool's results are checked against (class-validator plays no part there). */
  outputSchema(dto: Type<unknown>, site: string): JsonObject {
    try {
      return this.schemas.createOutput(dto) as JsonObject;
    } catch (error) {
      throw new Error(messages.SCHEMA_FAILED(site, (error as Error).message));
    }
  }
}

export const sharedDtoCompiler = new DtoCompiler();
const nullableDtoCompiler = new DtoCompiler({ nullableOptionals: true });

/** The process-wide compiler for a module's `schemas.nullableOptionals` setting. */
export function dtoCompilerFor(nullableOptionals: boolean): DtoCompiler {
  return nullableOptionals ? nullableDtoCompiler : sharedDtoCompiler;
}
