import 'reflect-metadata';
import { ValidationTypes } from 'class-validator';
import type { JsonSchema, JsonTypeName } from './json-schema.types.js';
import { SchemaGenerationError } from './schema-generation.error.js';
import { getSchemaPropertyOptions, type SchemaPropertyOptions } from './schema-property.decorator.js';
import { copyJson } from './json-copy.js';
import { callTypeFunction, droppedOnInput, getTransformerStorage } from './dto-metadata.js';
import { swaggerAnnotations, type SwaggerProperty } from './swagger-property.js';
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

// What class-validator's rules (with class-transformer's @Type and @SchemaProperty) say about one
// DTO property, as the emitter models it; swagger-property.ts reads @ApiProperty the same way.

/**
 * What the schema is for. Arguments are validated by class-validator too, so a class it knows must
 * describe every property through it; a tool's output is checked against the schema alone, so any
 * source of property types will do.
 */
export type Direction = 'input' | 'output';

/**
 * One property described by class-validator: its value or array schema, whether it is required,
 * and the nested DTO classes it embeds. Undefined when class-transformer drops it from arguments.
 *
 * @throws SchemaGenerationError when the rules cannot be turned into a schema; the message names
 *   `Dto.property` and the fix.
 */
export function analyzeProperty(
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
