import 'reflect-metadata';
import type { JsonSchema } from './json-schema.types.js';
import { SchemaGenerationError } from './schema-generation.error.js';
import { getSchemaPropertyOptions, type SchemaPropertyOptions } from './schema-property.decorator.js';
import { deepFreeze } from './json-copy.js';
import {
  droppedOnOutput,
  getTransformerStorage,
  propertyNames,
  readDefaults,
  typedPropertyNames,
} from './dto-metadata.js';
import { swaggerProperties, swaggerProperty, swaggerPropertyOf } from './swagger-property.js';
import type { PropertyModel, Resolve } from './property-model.js';
import { getEffectiveValidationMetadata, type ValidationMetadata } from './validation-rules.js';
import { analyzeProperty, type Direction } from './validator-property.js';

interface ClassModel {
  readonly properties: readonly PropertyModel[];
  readonly nested: readonly Function[];
}

/**
 * Turns DTO classes (class-validator + class-transformer + `@SchemaProperty`, and @nestjs/swagger's
 * `@ApiProperty` where class-validator says nothing) into JSON Schema 2020-12 object schemas, for
 * MCP `inputSchema`/`outputSchema` and for validating with Ajv.
 *
 * Property names come from class-validator metadata ∪ `@SchemaProperty` ∪ `@ApiProperty` ∪
 * class-transformer `@Expose`. For arguments, a name class-validator does not know is an error
 * when the class has class-validator rules, because validation with `forbidNonWhitelisted` would
 * refuse it; a class without any is described by `@ApiProperty` alone and validated by its schema.
 * For outputs, properties class-validator does not describe take their schema from `@ApiProperty`;
 * a property no decorator describes, or a class with none at all, is an error rather than an
 * empty closed object. Nested DTOs are inlined; only classes on a cycle go to `$defs` and are
 * referenced as `#/$defs/<Name>` (a recursive root is also inlined as the document itself, since
 * MCP wants an object schema there). Results are cached per class identity and direction, and
 * deep-frozen.
 *
 * @publicApi
 */
export class JsonSchemaFactory {
  private readonly schemas = {
    input: new WeakMap<Function, JsonSchema>(),
    output: new WeakMap<Function, JsonSchema>(),
  };
  private readonly models = { input: new WeakMap<Function, ClassModel>(), output: new WeakMap<Function, ClassModel>() };

  /**
   * @param options.nullableOptionals Also admit `null` for `@IsOptional()` properties (as
   *   class-validator does), emitted as `type: [X, "null"]`. Off by default: single-type dialects
   *   (Gemini-style function declarations) and Inspector's `--strict` checks refuse type unions,
   *   and a schema stricter than the validator is sound, a looser one is not.
   */
  constructor(private readonly options: { nullableOptionals?: boolean } = {}) {}

  /**
   * The input schema for a DTO class.
   *
   * @throws SchemaGenerationError when a property cannot be described; the message names
   *   `Dto.property` and the fix.
   */
  create(type: Function): JsonSchema {
    return this.cached(type, 'input');
  }

  /**
   * The schema a tool's return value is checked against (`outputSchema`): as {@link create}, but
   * properties need no class-validator decorator, since nothing but this schema checks them.
   *
   * @throws SchemaGenerationError when a property cannot be described, or the class describes none.
   */
  createOutput(type: Function): JsonSchema {
    return this.cached(type, 'output');
  }

  private cached(type: Function, direction: Direction): JsonSchema {
    const cached = this.schemas[direction].get(type);
    if (cached) return cached;
    const schema = deepFreeze(this.emit(type, direction));
    this.schemas[direction].set(type, schema);
    return schema;
  }

  private emit(root: Function, direction: Direction): JsonSchema {
    const graph = new Map<Function, ClassModel>();
    const visit = (type: Function): void => {
      if (graph.has(type)) return;
      const model = this.model(type, direction);
      graph.set(type, model);
      model.nested.forEach(visit);
    };
    visit(root);

    const recursive = findRecursive(graph);
    const defNames = new Map<Function, string>();
    const taken = new Set<string>();
    for (const type of graph.keys()) {
      if (!recursive.has(type)) continue;
      const base = (type.name || 'Anonymous').replace(/[^A-Za-z0-9_]/g, '_');
      let name = base;
      for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
      taken.add(name);
      defNames.set(type, name);
    }

    const defs: Record<string, JsonSchema> = {};
    const inline = new Map<Function, JsonSchema>();
    const resolve: Resolve = (type) => {
      const defName = defNames.get(type);
      if (defName !== undefined) {
        // Own keys only, defined rather than assigned: a class may be named `toString` or `__proto__`.
        if (!Object.hasOwn(defs, defName)) {
          defineDef(defs, defName, {}); // reserve first: rendering may come back here through the cycle
          defineDef(defs, defName, renderObject(graph.get(type)!, resolve));
        }
        return { $ref: `#/$defs/${defName}` };
      }
      let schema = inline.get(type);
      if (!schema) {
        schema = renderObject(graph.get(type)!, resolve);
        inline.set(type, schema);
      }
      return schema;
    };
    // A recursive root is both the document and a $defs entry its descendants point to; the
    // root itself must stay an inline object schema for MCP clients.
    const rootDef = defNames.get(root);
    let schema: JsonSchema;
    if (rootDef !== undefined) {
      resolve(root);
      schema = { ...defs[rootDef]! };
    } else {
      schema = renderObject(graph.get(root)!, resolve);
    }
    if (Object.keys(defs).length > 0) schema.$defs = defs;
    return schema;
  }

  private model(type: Function, direction: Direction): ClassModel {
    const cached = this.models[direction].get(type);
    if (cached) return cached;
    const dto = type.name || 'AnonymousDto';
    const effective = getEffectiveValidationMetadata(type);
    const byProperty = new Map<string, ValidationMetadata[]>();
    for (const meta of effective) {
      const list = byProperty.get(meta.propertyName);
      if (list) list.push(meta);
      else byProperty.set(meta.propertyName, [meta]);
    }
    const { defaults, fields } = readDefaults(type);
    const swagger = swaggerProperties(type, dto);
    const names = propertyNames(type, swagger.keys());
    const nullableOptionals = this.options.nullableOptionals === true;
    const properties: PropertyModel[] = [];
    for (const name of names) {
      const metas = byProperty.get(name) ?? [];
      let property: PropertyModel | undefined;
      if (metas.length > 0) {
        property = analyzeProperty(
          type,
          name,
          metas,
          defaults,
          nullableOptionals,
          swagger.get(name) ?? swaggerPropertyOf(type, name),
          direction,
        );
      } else if (direction === 'input' && (effective.length > 0 || !swagger.has(name))) {
        throw SchemaGenerationError.notValidated(
          dto,
          name,
          swagger.has(name) ? '@ApiProperty' : '@SchemaProperty or @Expose',
        );
      } else if (swagger.has(name)) {
        property = swaggerProperty(type, name, swagger.get(name)!, defaults);
      } else if (describesType(getSchemaPropertyOptions(type, name))) {
        property = analyzeProperty(type, name, [], defaults, nullableOptionals, undefined, direction);
      } else {
        throw SchemaGenerationError.undescribed(dto, name, '@Expose() or @SchemaProperty() without a type');
      }
      if (property) properties.push(property);
    }
    if (direction === 'output') {
      // A declared field no decorator describes would be in returned objects, and refused there.
      const declared = new Set([...typedPropertyNames(type), ...fields]);
      const undescribed = [...declared].find((field) => !names.includes(field) && !droppedOnOutput(type, field));
      if (undescribed !== undefined) {
        const typed = getTransformerStorage().findTypeMetadata(type, undescribed) !== undefined;
        throw SchemaGenerationError.undescribed(dto, undescribed, typed ? '@Type()' : 'its field declaration');
      }
      if (properties.length === 0) throw SchemaGenerationError.noProperties(dto);
    }
    const model: ClassModel = { properties, nested: [...new Set(properties.flatMap((p) => p.nested))] };
    this.models[direction].set(type, model);
    return model;
  }
}

function renderObject(model: ClassModel, resolve: Resolve): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const property of model.properties) {
    properties[property.name] = property.render(resolve);
    if (property.required) required.push(property.name);
  }
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  schema.additionalProperties = false;
  return schema;
}

/** Whether `@SchemaProperty()` alone says what the value is. */
function describesType(options: SchemaPropertyOptions | undefined): boolean {
  return (
    options !== undefined &&
    (options.type !== undefined ||
      options.schema !== undefined ||
      options.enum !== undefined ||
      options.items !== undefined)
  );
}

function findRecursive(graph: ReadonlyMap<Function, ClassModel>): Set<Function> {
  const recursive = new Set<Function>();
  for (const [start, model] of graph) {
    const seen = new Set<Function>();
    const stack = [...model.nested];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (next === start) {
        recursive.add(start);
        break;
      }
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(graph.get(next)?.nested ?? []));
    }
  }
  return recursive;
}

function defineDef(defs: Record<string, JsonSchema>, name: string, schema: JsonSchema): void {
  Object.defineProperty(defs, name, { value: schema, enumerable: true, writable: true, configurable: true });
}
