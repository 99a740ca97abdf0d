export type { JsonSchema, JsonTypeName, ValidationIssue } from './json-schema.types.js';
export { SchemaGenerationError } from './schema-generation.error.js';
export { SchemaProperty, SCHEMA_PROPERTY_METADATA, type SchemaPropertyOptions } from './schema-property.decorator.js';
export { JsonSchemaFactory } from './json-schema.factory.js';
export {
  DtoCaster,
  formatIssues,
  type CastResult,
  type ClassConstructor,
  type CompiledCaster,
  type DtoCasterOptions,
} from './dto-caster.js';
export { compileJsonSchema, type JsonSchemaCheck } from './json-schema.validator.js';
