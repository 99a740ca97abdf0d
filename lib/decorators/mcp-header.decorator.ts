import 'reflect-metadata';
import {
  SCHEMA_PROPERTY_METADATA,
  SchemaProperty,
  type SchemaPropertyOptions,
} from '../schema/schema-property.decorator.js';

/**
 * Mirrors a tool argument into an `Mcp-Param-<name>` HTTP header (2026-07-28), so that load
 * balancers, gateways and rate limiters can route on it without parsing the body: the property's
 * schema gets `"x-mcp-header": name`, clients send the header, and the server answers 400
 * (-32020) when the header is missing while the argument is present, malformed, or disagrees with
 * the body.
 *
 * Only string, integer and boolean properties reachable through `properties` alone (the DTO's
 * own properties and those of nested DTOs, not array items) may carry it, and names must be unique
 * ignoring case; anything else fails the bootstrap naming the tool and the property.
 *
 * @example
 * class ForecastDto {
 *   @McpHeader('Region') @IsString() region!: string;
 *   @IsInt() days!: number;
 * }
 *
 * @publicApi
 */
export function McpHeader(name: string): PropertyDecorator {
  return (prototype: object, propertyKey: string | symbol) => {
    if (typeof propertyKey !== 'string') return;
    // Merge into a raw `schema` given by an @SchemaProperty() below this decorator; one written
    // above it replaces `schema` wholesale, so put @McpHeader() on top (or write the key there).
    const previous = Reflect.getOwnMetadata(SCHEMA_PROPERTY_METADATA, prototype, propertyKey) as
      SchemaPropertyOptions | undefined;
    SchemaProperty({ schema: { ...previous?.schema, 'x-mcp-header': name } })(prototype, propertyKey);
  };
}
