import 'reflect-metadata';
import { ValidationTypes } from 'class-validator';
import type { JsonSchema, JsonTypeName } from './json-schema.types.js';
import { SchemaGenerationError } from './schema-generation.error.js';
import { getSchemaPropertyOptions, type SchemaPropertyOptions } from './schema-property.decorator.js';
import { copyJson, deepFreeze, jsonClone } from './json-copy.js';
import { callTypeFunction, droppedOnInput, getTransformerStorage, propertyNames, readDefaults } from './dto-metadata.js';
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

type Resolve = (type: Function) => JsonSchema;

interface PropertyModel {
  readonly name: string;
  readonly required: boolean;
  /** DTO classes this property embeds, for cycle detection. */
  readonly nested: readonly Function[];
  /** Builds the property schema once nested classes can be resolved (inline or `$ref`). */
  render(resolve: Resolve): JsonSchema;
}

interface ClassModel {
  readonly properties: readonly PropertyModel[];
  readonly nested: readonly Function[];
}

/**
 * Turns DTO classes (class-validator + class-transformer + `@SchemaProperty`) into JSON Schema
 * 2020-12 object schemas, for MCP `inputSchema` and for validating arguments with Ajv.
 *
 * Property names come from class-validator metadata ∪ `@SchemaProperty` ∪ class-transformer
 * `@Expose`; a name class-validator does not know is an error, because validation with
 * `forbidNonWhitelisted` would refuse it. Nested DTOs are inlined; only classes on a cycle go to
 * `$defs` and are referenced as `#/$defs/<Name>` (a recursive root is also inlined as the
 * document itself, since MCP wants an object schema there). Results are cached per class
 * identity and deep-frozen.
 *
 * @publicApi
 */
export class JsonSchemaFactory {
  private readonly schemas = new WeakMap<Function, JsonSchema>();
  private readonly models = new WeakMap<Function, ClassModel>();

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
    const cached = this.schemas.get(type);
    if (cached) return cached;
    const schema = deepFreeze(this.emit(type));
    this.schemas.set(type, schema);
    return schema;
  }

  private emit(root: Function): JsonSchema {
    const graph = new Map<Function, ClassModel>();
    const visit = (type: Function): void => {
      if (graph.has(type)) return;
      const model = this.model(type);
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

  private model(type: Function): ClassModel {
    const cached = this.models.get(type);
    if (cached) return cached;
    const effective = getEffectiveValidationMetadata(type);
    const byProperty = new Map<string, ValidationMetadata[]>();
    for (const meta of effective) {
      const list = byProperty.get(meta.propertyName);
      if (list) list.push(meta);
      else byProperty.set(meta.propertyName, [meta]);
    }
    const defaults = readDefaults(type);
    const properties: PropertyModel[] = [];
    for (const name of propertyNames(type)) {
      const property = analyzeProperty(type, name, byProperty.get(name) ?? [], defaults, this.options.nullableOptionals === true);
      if (property) properties.push(property);
    }
    const model: ClassModel = { properties, nested: [...new Set(properties.flatMap((p) => p.nested))] };
    this.models.set(type, model);
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
  if (metas.length === 0) throw SchemaGenerationError.notValidated(dto, name);

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
    if (getEffectiveValidationMetadata(target).length === 0) {
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
      const hint = designType && primitiveKind(designType) === undefined && designType !== Object ? designType.name : 'X';
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
        const itemKind = resolveKind(itemDraft, dto, name) ?? (itemDraft.enumValues ? undefined : primitiveKind(itemTarget));
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

  const nullable = options.nullable ?? (optional && nullableOptionals);
  const defaultValue = options.default !== undefined ? options.default : jsonClone(defaults.get(name));
  return {
    name,
    required,
    nested,
    render(resolve) {
      let schema = build(resolve);
      if (nullable) schema = withNull(schema);
      const out: JsonSchema = {};
      if (options.title !== undefined) out.title = options.title;
      if (options.description !== undefined) out.description = options.description;
      Object.assign(out, schema);
      if (options.format !== undefined) out.format = options.format;
      if (defaultValue !== undefined) out.default = copyJson(defaultValue);
      if (options.examples !== undefined) out.examples = copyJson([...options.examples]);
      if (options.deprecated !== undefined) out.deprecated = options.deprecated;
      if (options.schema !== undefined) Object.assign(out, copyJson(options.schema));
      return out;
    },
  };
}

/** Adds `null` to the accepted values without touching keywords that only apply to other types. */
function withNull(schema: JsonSchema): JsonSchema {
  if (['$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'const'].some((keyword) => keyword in schema)) {
    return { anyOf: [schema, { type: 'null' }] };
  }
  if (schema.type === undefined && schema.enum === undefined) return schema;
  const out = { ...schema };
  if (out.type !== undefined) {
    const types = Array.isArray(out.type) ? (out.type as string[]) : [out.type as string];
    if (!types.includes('null')) out.type = [...types, 'null'];
  }
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
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
