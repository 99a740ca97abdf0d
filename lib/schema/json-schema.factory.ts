import 'reflect-metadata';
import { ValidationTypes } from 'class-validator';
import type { JsonSchema, JsonTypeName } from './json-schema.types.js';
import { SchemaGenerationError } from './schema-generation.error.js';
import { getSchemaPropertyOptions, type SchemaPropertyOptions } from './schema-property.decorator.js';
import { copyJson, deepFreeze } from './json-copy.js';
import {
  callTypeFunction,
  droppedOnInput,
  droppedOnOutput,
  getTransformerStorage,
  propertyNames,
  readDefaults,
  typedPropertyNames,
} from './dto-metadata.js';
import {
  swaggerAnnotations,
  swaggerProperties,
  swaggerProperty,
  swaggerPropertyOf,
  type SwaggerProperty,
} from './swagger-property.js';
import { finish, type PropertyModel, type Resolve } from './property-model.js';
import {
  acceptsUndefined,
  collect,
  getEffectiveValidationMetadata,
  primitiveSchema,
  resolveKind,
  type Draft,
  type Kind,
  type ValidationMetadata,
} from './validation-rules.js';

interface ClassModel {
  readonly properties: readonly PropertyModel[];
  readonly nested: readonly Function[];
}

/**
 * What the schema is for. Arguments are validated by class-validator too, so a class it knows must
 * describe every property through it; a tool's output is checked against the schema alone, so any
 * source of property types will do.
 */
type Direction = 'input' | 'output';

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

function analyzeProperty(
  type: Function,
  name: string,
  metas: readonly ValidationMetadata[],
  defaults: ReadonlyMap<string, unknown>,
  nullableOptionals: boolean,
  swagger: SwaggerProperty | undefined,
  direction: Direction,
): PropertyModel | undefined {
  const dto = type.name || 'AnonymousDto';
  const options: SchemaPropertyOptions = getSchemaPropertyOptions(type, name) ?? {};
  const transformer = getTransformerStorage();

  const renamed = transformer.findExposeMetadata(type, name)?.options?.name;
  if (renamed !== undefined && renamed !== name) {
    throw SchemaGenerationError.unsupported(
      dto,
      name,
      `@Expose({ name: "${renamed}" }) renames it, which tool argument schemas do not support`,
      'Name the property as the argument is named, or drop the rename.',
    );
  }

  let optional = false;
  let conditional = false;
  let defined = false;
  let nestedValidation = false;
  const valueRules: ValidationMetadata[] = [];
  const eachRules: ValidationMetadata[] = [];
  for (const meta of metas) {
    if (meta.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      if (meta.name === 'isOptional') optional = true;
      else conditional = true;
    } else if (meta.type === ValidationTypes.IS_DEFINED) {
      defined = true;
    } else if (meta.type === ValidationTypes.NESTED_VALIDATION) {
      nestedValidation = true;
    } else if (meta.type === ValidationTypes.CUSTOM_VALIDATION) {
      (meta.each ? eachRules : valueRules).push(meta);
    }
  }

  const hasDefault = defaults.has(name);
  const rejectsUndefined = defined || [...valueRules, ...eachRules].some((meta) => !acceptsUndefined(meta));
  const required = options.required ?? (!optional && !conditional && !hasDefault && rejectsUndefined);

  if (droppedOnInput(type, name)) {
    if (required) {
      throw SchemaGenerationError.unsupported(
        dto,
        name,
        'class-transformer drops it from arguments (@Exclude or an excludeAll strategy) yet it is validated as required, so every call would fail',
        'Remove @Exclude() or mark the property @IsOptional().',
      );
    }
    return undefined;
  }

  const designType = Reflect.getMetadata('design:type', type.prototype, name) as Function | undefined;
  const typeMeta = transformer.findTypeMetadata(type, name);
  if (typeMeta?.options?.discriminator !== undefined && options.schema === undefined) {
    throw SchemaGenerationError.unsupported(
      dto,
      name,
      '@Type() with a discriminator (polymorphic nested DTOs) cannot be derived',
      'Describe the accepted shapes with @SchemaProperty({ schema: { anyOf: [...] } }).',
    );
  }
  const transformTarget = typeMeta ? callTypeFunction(typeMeta.typeFunction, dto, name) : undefined;
  const overrideTarget = typeof options.type === 'function' ? options.type() : undefined;
  const overrideTypes: JsonTypeName[] | undefined =
    typeof options.type === 'string' ? [options.type] : Array.isArray(options.type) ? [...options.type] : undefined;
  const describedRaw = options.schema !== undefined || overrideTypes !== undefined;

  let valueDraft = collect(valueRules, dto, name);
  let valueKind = resolveKind(valueDraft, dto, name);
  const isArray = overrideTypes
    ? overrideTypes.includes('array')
    : overrideTarget
      ? overrideTarget === Array
      : valueKind === 'array' ||
        (valueKind === undefined &&
          valueDraft.enumValues === undefined &&
          (designType === Array || options.items !== undefined));
  if (!isArray && eachRules.length > 0) {
    // class-validator applies `each` rules to a non-array value itself.
    valueDraft = collect([...valueRules, ...eachRules], dto, name);
    valueKind = resolveKind(valueDraft, dto, name);
  }

  const nested: Function[] = [];
  const requireDtoClass = (target: Function | undefined, hint: string): Function => {
    if (!target || primitiveKind(target) !== undefined || target === Object || target === Array) {
      throw SchemaGenerationError.nestedWithoutType(dto, name, hint);
    }
    // Only arguments go through class-validator; an output's nested class may be @ApiProperty-only.
    if (direction === 'input' && getEffectiveValidationMetadata(target).length === 0) {
      throw SchemaGenerationError.nestedWithoutRules(dto, name, target.name);
    }
    return target;
  };
  const rejectUndeclaredClass = (target: Function | undefined): void => {
    if (target && primitiveKind(target) === undefined && target !== Object && target !== Array) {
      if (getEffectiveValidationMetadata(target).length > 0) {
        throw SchemaGenerationError.nestedWithoutValidation(dto, name, target.name);
      }
    }
  };
  const requireDateConversion = (draft: Draft): void => {
    if (draft.explicit.has('date') && transformTarget !== Date) throw SchemaGenerationError.dateWithoutType(dto, name);
  };

  let build: (resolve: Resolve) => JsonSchema;
  if (!isArray) {
    if (nestedValidation && !overrideTypes && options.schema === undefined) {
      if (valueKind !== undefined && valueKind !== 'object') {
        throw SchemaGenerationError.conflictingTypes(dto, name, [valueKind, 'object (@ValidateNested)']);
      }
      const hint =
        designType && primitiveKind(designType) === undefined && designType !== Object ? designType.name : 'X';
      const target = requireDtoClass(overrideTarget ?? transformTarget, hint);
      if (transformTarget === undefined) throw SchemaGenerationError.nestedWithoutType(dto, name, target.name);
      nested.push(target);
      build = (resolve) => resolve(target);
    } else {
      const kind =
        valueKind ??
        (valueDraft.enumValues !== undefined || overrideTypes
          ? undefined
          : (primitiveKind(overrideTarget) ?? primitiveKind(transformTarget) ?? primitiveKind(designType)));
      if (kind === undefined && valueDraft.enumValues === undefined && !describedRaw && options.enum === undefined) {
        rejectUndeclaredClass(overrideTarget ?? transformTarget ?? designType);
        throw SchemaGenerationError.undescribable(dto, name, designType?.name ?? 'missing');
      }
      requireDateConversion(valueDraft);
      const schema = primitiveSchema(overrideTypes ?? kind, valueDraft, options.enum);
      build = () => schema;
    }
  } else {
    const arrayKeywords = primitiveSchema('array', valueDraft, undefined);
    let items: (resolve: Resolve) => JsonSchema;
    let objectItems = false;
    const itemsOption = options.items;
    if (itemsOption !== undefined && typeof itemsOption !== 'function') {
      const itemSchema = copyJson(itemsOption);
      items = () => itemSchema;
      objectItems = itemsOption.type === 'object' || '$ref' in itemsOption;
    } else {
      const itemTarget = typeof itemsOption === 'function' ? itemsOption() : transformTarget;
      if (nestedValidation) {
        const target = requireDtoClass(itemTarget, 'Item');
        if (transformTarget === undefined) throw SchemaGenerationError.nestedWithoutType(dto, name, target.name);
        nested.push(target);
        items = (resolve) => resolve(target);
        objectItems = true;
      } else {
        const itemDraft = collect(eachRules, dto, name);
        const itemKind =
          resolveKind(itemDraft, dto, name) ?? (itemDraft.enumValues ? undefined : primitiveKind(itemTarget));
        const rawItems = options.schema !== undefined && ('items' in options.schema || 'prefixItems' in options.schema);
        if (itemKind === undefined && itemDraft.enumValues === undefined && !rawItems) {
          rejectUndeclaredClass(itemTarget);
          throw SchemaGenerationError.arrayWithoutItems(dto, name);
        }
        requireDateConversion(itemDraft);
        const itemSchema = primitiveSchema(itemKind, itemDraft, undefined);
        objectItems = itemKind === 'object' || itemKind === 'array';
        items = () => itemSchema;
      }
    }
    // Without an identifier class-validator compares items with ===, so duplicates can only be
    // detected for primitives; JSON Schema's uniqueItems compares objects deeply.
    if (objectItems) delete arrayKeywords.uniqueItems;
    build = (resolve) => ({ ...arrayKeywords, items: items(resolve) });
  }

  return finish(
    name,
    required,
    nested,
    build,
    options,
    options.nullable ?? (optional && nullableOptionals),
    defaults.get(name),
    swaggerAnnotations(swagger),
  );
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

function primitiveKind(type: Function | undefined): Kind | undefined {
  switch (type) {
    case String:
      return 'string';
    case Number:
      return 'number';
    case Boolean:
      return 'boolean';
    case Date:
      return 'date';
    case Array:
      return 'array';
    default:
      return undefined;
  }
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
