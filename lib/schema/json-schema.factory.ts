import 'reflect-metadata';
import { getMetadataStorage, ValidationTypes, type MetadataStorage } from 'class-validator';
import { TransformationType } from 'class-transformer';
import * as transformerStorageModule from 'class-transformer/cjs/storage.js';
import type { JsonSchema, JsonTypeName } from './json-schema.types.js';
import { SchemaGenerationError } from './schema-generation.error.js';
import {
  getSchemaPropertyNames,
  getSchemaPropertyOptions,
  type SchemaPropertyOptions,
} from './schema-property.decorator.js';

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];
type Primitive = string | number | boolean | null;
/** A value kind; `date` is a JSON string that class-transformer turns into a `Date`. */
type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'date';
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

/** The slice of class-transformer's metadata storage this factory reads (public methods only). */
interface TransformerStorage {
  findTypeMetadata(
    target: Function,
    propertyName: string,
  ): { typeFunction?: (options?: unknown) => Function; options?: { discriminator?: unknown } } | undefined;
  findExposeMetadata(target: Function, propertyName: string): { options?: { name?: string } } | undefined;
  getExposedProperties(target: Function, transformationType: TransformationType): string[];
  getExcludedProperties(target: Function, transformationType: TransformationType): string[];
  getStrategy(target: Function): 'excludeAll' | 'exposeAll' | 'none';
}

let transformerStorage: TransformerStorage | undefined;

/**
 * class-transformer keeps `@Type`/`@Exclude` metadata in a module-level storage that its index
 * does not export. The package has no `exports` map, so Node (ESM and CJS alike) loads the CJS
 * build for `import 'class-transformer'`; importing `cjs/storage.js` hits the same module cache
 * entry, hence the very storage the decorators wrote to. A static import (no lookup relative to
 * the module URL) keeps this module valid in the CommonJS build too.
 */
function getTransformerStorage(): TransformerStorage {
  if (!transformerStorage) {
    const loaded = transformerStorageModule as { defaultMetadataStorage?: TransformerStorage };
    if (!loaded.defaultMetadataStorage) {
      throw new Error(
        'Cannot read class-transformer metadata: "class-transformer/cjs/storage.js" has no defaultMetadataStorage. Install class-transformer ^0.5.1.',
      );
    }
    transformerStorage = loaded.defaultMetadataStorage;
  }
  return transformerStorage;
}

const EXPLICIT_KINDS: Readonly<Record<string, Kind>> = {
  isString: 'string',
  isInt: 'integer',
  isNumber: 'number',
  isBoolean: 'boolean',
  isArray: 'array',
  isObject: 'object',
  isDate: 'date',
};

// Every class-validator string validator starts with `typeof value === 'string'`.
const STRING_RULES = new Set([
  'contains', 'notContains', 'isAlpha', 'isAlphanumeric', 'isAscii', 'isBIC', 'isBase32', 'isBase58', 'isBase64',
  'isBooleanString', 'isBtcAddress', 'isByteLength', 'isCreditCard', 'isCurrency', 'isDataURI', 'isDateString',
  'isDecimal', 'isEAN', 'isEmail', 'isEthereumAddress', 'isFqdn', 'IsFirebasePushId', 'isFullWidth', 'isHSL',
  'isHalfWidth', 'isHash', 'isHexColor', 'isHexadecimal', 'isIBAN', 'isIp', 'isIsbn', 'isIsin', 'isISO31661Alpha2',
  'isISO31661Alpha3', 'isISO31661Numeric', 'isIso8601', 'isISRC', 'isISSN', 'isIdentityCard', 'isJson', 'isJwt',
  'isLocale', 'isLowercase', 'isMacAddress', 'isMagnetURI', 'isMilitaryTime', 'isMimeType', 'isMobilePhone',
  'isMongoId', 'isMultibyte', 'isNumberString', 'isOctal', 'isPassportNumber', 'isPhoneNumber', 'isPort',
  'isPostalCode', 'isRFC3339', 'isRgbColor', 'isSemVer', 'isStrongPassword', 'isSurrogatePair', 'isTimeZone',
  'isUuid', 'isUppercase', 'isUrl', 'isVariableWidth', 'isLength', 'matches', 'maxLength', 'minLength',
  'isISO4217CurrencyCode', 'isTaxId', 'isISO6391',
]);
const IMPLIED_KINDS: ReadonlyMap<string, Kind> = new Map<string, Kind>([
  ...[...STRING_RULES].map((rule) => [rule, 'string'] as [string, Kind]),
  ...['min', 'max', 'isPositive', 'isNegative', 'isDivisibleBy'].map((rule) => [rule, 'number'] as [string, Kind]),
  ...['arrayContains', 'arrayNotContains', 'arrayMinSize', 'arrayMaxSize', 'arrayNotEmpty', 'arrayUnique'].map(
    (rule) => [rule, 'array'] as [string, Kind],
  ),
  ['isNotEmptyObject', 'object'],
  ['minDate', 'date'],
  ['maxDate', 'date'],
]);
const FORMATS: Readonly<Record<string, string>> = {
  isEmail: 'email',
  isUuid: 'uuid',
  isUrl: 'uri',
  // isDateString/isIso8601 also accept dates, week dates and ordinal dates: no format is claimed.
  isRFC3339: 'date-time',
};
const KEYWORD_ORDER = [
  'minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties',
];
const BUILT_IN_RULES = new Set<string>([
  ...Object.keys(EXPLICIT_KINDS),
  ...IMPLIED_KINDS.keys(),
  'isEnum', 'isIn', 'isNotIn', 'equals', 'notEquals', 'isEmpty', 'isNotEmpty', 'isDefined', 'isInstance',
  'isLatLong', 'isLatitude', 'isLongitude', ValidationTypes.NESTED_VALIDATION, ValidationTypes.WHITELIST,
]);

/**
 * Whether a constraint key belongs to class-validator itself, whose default messages never
 * contain the validated value.
 *
 * @internal
 */
export function isBuiltInRule(rule: string): boolean {
  return BUILT_IN_RULES.has(rule);
}

/**
 * The metadata class-validator applies when validating an instance of `type` without groups,
 * obtained exactly as its executor does (inheritance included: a subclass's validators of one
 * kind replace the parent's on the same property).
 *
 * @internal
 */
export function getEffectiveValidationMetadata(type: Function): ValidationMetadata[] {
  return getMetadataStorage().getTargetValidationMetadatas(type, '', false, false);
}

/** Accumulates what the validators of one value (or of each array item) say about it. */
class Draft {
  readonly explicit = new Set<Kind>();
  readonly implied = new Set<Kind>();
  readonly keywords: JsonSchema = {};
  readonly patterns: string[] = [];
  readonly excluded: Primitive[] = [];
  enumValues: Primitive[] | undefined;
  format: string | undefined;
  notEmpty = false;

  restrictEnum(values: readonly unknown[]): void {
    const json = values.filter(isJsonPrimitive);
    this.enumValues = this.enumValues ? this.enumValues.filter((v) => json.includes(v)) : dedupe(json);
  }

  raise(keyword: string, value: unknown): void {
    if (typeof value !== 'number' || !Number.isFinite(value)) return;
    const current = this.keywords[keyword];
    this.keywords[keyword] = typeof current === 'number' ? Math.max(current, value) : value;
  }

  lower(keyword: string, value: unknown): void {
    if (typeof value !== 'number' || !Number.isFinite(value)) return;
    const current = this.keywords[keyword];
    this.keywords[keyword] = typeof current === 'number' ? Math.min(current, value) : value;
  }
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

/** Ancestors first, so inherited properties keep their declaration order ahead of new ones. */
function propertyNames(type: Function): string[] {
  const chain: Function[] = [];
  for (let t: unknown = type; typeof t === 'function' && t !== Function.prototype; t = Object.getPrototypeOf(t)) {
    chain.unshift(t as Function);
  }
  const transformer = getTransformerStorage();
  const names = new Set<string>();
  for (const t of chain) {
    for (const meta of getEffectiveValidationMetadata(t)) names.add(meta.propertyName);
  }
  for (const name of getSchemaPropertyNames(type)) names.add(name);
  for (const name of transformer.getExposedProperties(type, TransformationType.PLAIN_TO_CLASS)) names.add(name);
  return [...names];
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

/**
 * The constraint key class-validator reports for a metadata entry (`isString`, `min`, ...).
 *
 * @internal
 */
export function validationRuleName(meta: ValidationMetadata): string {
  if (meta.name) return meta.name;
  return getMetadataStorage().getTargetValidatorConstraints(meta.constraintCls)[0]?.name ?? meta.type;
}

function collect(rules: readonly ValidationMetadata[], dto: string, property: string): Draft {
  const draft = new Draft();
  for (const meta of rules) {
    const rule = validationRuleName(meta);
    const [c0, c1] = meta.constraints ?? [];
    // Rule names are free text (custom constraints name themselves): never read inherited keys.
    const explicit = Object.hasOwn(EXPLICIT_KINDS, rule) ? EXPLICIT_KINDS[rule] : undefined;
    if (explicit) draft.explicit.add(explicit);
    const implied = IMPLIED_KINDS.get(rule);
    if (implied) draft.implied.add(implied);
    const format = Object.hasOwn(FORMATS, rule) ? FORMATS[rule] : undefined;
    if (format) draft.format = format;
    switch (rule) {
      case 'min':
        draft.raise('minimum', c0);
        break;
      case 'max':
        draft.lower('maximum', c0);
        break;
      case 'isPositive':
        draft.raise('exclusiveMinimum', 0);
        break;
      case 'isNegative':
        draft.lower('exclusiveMaximum', 0);
        break;
      case 'isDivisibleBy':
        // class-validator divides by parseInt(n), so only positive integers mean what they say.
        if (typeof c0 === 'number' && Number.isInteger(c0) && c0 > 0) draft.keywords.multipleOf = c0;
        break;
      case 'minLength':
        draft.raise('minLength', c0);
        break;
      case 'maxLength':
        draft.lower('maxLength', c0);
        break;
      case 'isLength':
        draft.raise('minLength', c0);
        draft.lower('maxLength', c1);
        break;
      case 'arrayMinSize':
        draft.raise('minItems', c0);
        break;
      case 'arrayMaxSize':
        draft.lower('maxItems', c0);
        break;
      case 'arrayNotEmpty':
        draft.raise('minItems', 1);
        break;
      case 'arrayUnique':
        draft.keywords.uniqueItems = true;
        break;
      case 'isNotEmptyObject':
        draft.raise('minProperties', 1);
        break;
      case 'isNotEmpty':
        draft.notEmpty = true;
        break;
      case 'isIp':
        if (String(c0) === '4') draft.format = 'ipv4';
        if (String(c0) === '6') draft.format = 'ipv6';
        break;
      case 'isEnum':
        draft.restrictEnum(Array.isArray(c1) ? c1 : enumObjectValues(c0));
        break;
      case 'isIn':
        if (Array.isArray(c0)) draft.restrictEnum(c0);
        break;
      case 'equals':
        draft.restrictEnum([c0]);
        break;
      case 'notEquals':
        if (isJsonPrimitive(c0)) draft.excluded.push(c0);
        break;
      case 'isNotIn':
        if (Array.isArray(c0)) draft.excluded.push(...c0.filter(isJsonPrimitive));
        break;
      case 'matches':
        draft.patterns.push(patternOf(c0, c1, dto, property));
        break;
    }
  }
  return draft;
}

function resolveKind(draft: Draft, dto: string, property: string): Kind | undefined {
  let explicit = [...draft.explicit];
  if (explicit.includes('integer')) explicit = explicit.filter((kind) => kind !== 'number');
  const implied = [...draft.implied];
  const fits = (kind: Kind, wanted: Kind) => kind === wanted || (kind === 'integer' && wanted === 'number');
  if (explicit.length > 1) throw SchemaGenerationError.conflictingTypes(dto, property, explicit);
  if (explicit.length === 1) {
    const bad = implied.filter((kind) => !fits(explicit[0]!, kind));
    if (bad.length > 0) throw SchemaGenerationError.conflictingTypes(dto, property, [explicit[0]!, ...bad]);
    return explicit[0];
  }
  if (implied.length > 1) throw SchemaGenerationError.conflictingTypes(dto, property, implied);
  return implied[0];
}

function primitiveSchema(
  kind: Kind | JsonTypeName[] | undefined,
  draft: Draft,
  enumOverride: SchemaPropertyOptions['enum'],
): JsonSchema {
  const schema: JsonSchema = {};
  let types: JsonTypeName[] | undefined;
  if (Array.isArray(kind)) types = kind;
  else if (kind === 'date') {
    types = ['string'];
    draft.format ??= 'date-time';
  } else if (kind !== undefined) types = [kind];

  let values = enumOverride !== undefined ? enumValuesOf(enumOverride) : draft.enumValues;
  if (values !== undefined) {
    if (types) values = values.filter((value) => types!.some((t) => matchesType(value, t)));
    if (draft.notEmpty) values = values.filter((value) => value !== '' && value !== null);
    values = values.filter((value) => !draft.excluded.includes(value));
    types ??= typesOf(values);
  }
  if (types) schema.type = types.length === 1 ? types[0] : types;
  if (draft.format !== undefined) schema.format = draft.format;
  if (values !== undefined) schema.enum = values;
  else if (draft.excluded.length > 0) {
    schema.not = draft.excluded.length === 1 ? { const: draft.excluded[0] } : { enum: [...draft.excluded] };
  }
  if (draft.notEmpty && types?.includes('string')) draft.raise('minLength', 1);
  const [first, ...more] = draft.patterns;
  if (first !== undefined) schema.pattern = first;
  for (const keyword of KEYWORD_ORDER) if (draft.keywords[keyword] !== undefined) schema[keyword] = draft.keywords[keyword];
  if (more.length > 0) schema.allOf = more.map((pattern) => ({ pattern }));
  return schema;
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

function acceptsUndefined(meta: ValidationMetadata): boolean {
  const [c0] = meta.constraints ?? [];
  switch (validationRuleName(meta)) {
    case 'isEmpty':
      return true;
    case 'notEquals':
      return c0 !== undefined;
    case 'isNotIn':
      return !(Array.isArray(c0) && c0.includes(undefined));
    case 'equals':
      return c0 === undefined;
    case 'isIn':
      return Array.isArray(c0) && c0.includes(undefined);
    default:
      return false;
  }
}

function droppedOnInput(type: Function, name: string): boolean {
  const transformer = getTransformerStorage();
  if (transformer.getExcludedProperties(type, TransformationType.PLAIN_TO_CLASS).includes(name)) return true;
  return (
    transformer.getStrategy(type) === 'excludeAll' &&
    !transformer.getExposedProperties(type, TransformationType.PLAIN_TO_CLASS).includes(name)
  );
}

function callTypeFunction(fn: ((options?: unknown) => Function) | undefined, dto: string, name: string) {
  if (!fn) return undefined;
  try {
    return fn();
  } catch (error) {
    throw SchemaGenerationError.unsupported(
      dto,
      name,
      `its @Type() function threw without a source object (${(error as Error).message})`,
      'Use a plain thunk such as @Type(() => Address), or describe the property with @SchemaProperty({ schema }).',
    );
  }
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

function readDefaults(type: Function): Map<string, unknown> {
  const defaults = new Map<string, unknown>();
  try {
    // class-transformer runs the same constructor for every call, so field initialisers are the
    // values a missing property really gets.
    const instance = new (type as new () => object)() as Record<string, unknown>;
    for (const [key, value] of Object.entries(instance)) if (value !== undefined) defaults.set(key, value);
  } catch {
    // A constructor that needs arguments has no field defaults worth reporting.
  }
  return defaults;
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

function enumObjectValues(entity: unknown): unknown[] {
  if (!entity || typeof entity !== 'object') return [];
  // Numeric TS enums carry reverse mappings ("0" → "A"); those keys are not members.
  return Object.entries(entity)
    .filter(([key]) => Number.isNaN(Number.parseInt(key, 10)))
    .map(([, value]) => value as unknown);
}

function enumValuesOf(option: NonNullable<SchemaPropertyOptions['enum']>): Primitive[] {
  const values = Array.isArray(option) ? (option as unknown[]) : enumObjectValues(option);
  return dedupe(values.filter(isJsonPrimitive));
}

function isJsonPrimitive(value: unknown): value is Primitive {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function dedupe<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

function matchesType(value: Primitive, type: JsonTypeName): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
    case 'string':
    case 'boolean':
      return typeof value === type;
    default:
      return false;
  }
}

function typesOf(values: readonly Primitive[]): JsonTypeName[] | undefined {
  const types = new Set<JsonTypeName>();
  for (const value of values) {
    if (value === null) types.add('null');
    else if (typeof value === 'number') types.add(Number.isInteger(value) ? 'integer' : 'number');
    else types.add(typeof value as JsonTypeName);
  }
  if (types.has('number')) types.delete('integer');
  return types.size > 0 ? [...types] : undefined;
}

function defineDef(defs: Record<string, JsonSchema>, name: string, schema: JsonSchema): void {
  Object.defineProperty(defs, name, { value: schema, enumerable: true, writable: true, configurable: true });
}

function jsonClone(value: unknown): unknown {
  if (value === undefined || !isJsonValue(value)) return undefined;
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** Schemas are deep-frozen; copy what the user handed in so their objects stay theirs. */
function copyJson<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

function isJsonValue(value: unknown): boolean {
  if (isJsonPrimitive(value)) return true;
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value).every(isJsonValue);
  }
  return false;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// RegExp → JSON Schema pattern
// ---------------------------------------------------------------------------------------------

function patternOf(pattern: unknown, modifiers: unknown, dto: string, property: string): string {
  let regexp: RegExp;
  try {
    regexp = pattern instanceof RegExp ? pattern : new RegExp(String(pattern), typeof modifiers === 'string' ? modifiers : undefined);
  } catch (error) {
    throw SchemaGenerationError.unsupported(
      dto,
      property,
      `@Matches() has an invalid regular expression (${(error as Error).message})`,
      'Fix the pattern.',
    );
  }
  try {
    return regExpToPattern(regexp);
  } catch (error) {
    throw SchemaGenerationError.unsupported(
      dto,
      property,
      `@Matches(${String(regexp)}) cannot be written as a JSON Schema pattern: ${(error as Error).message}`,
      'Rewrite the expression without that construct, or state the pattern yourself with @SchemaProperty({ schema: { pattern } }).',
    );
  }
}

/**
 * Rewrites a JS RegExp as an ECMA-262 pattern string that means the same thing without flags
 * (JSON Schema patterns are unanchored, flag-less and Unicode-aware). `g`/`d` change nothing for
 * a yes/no match; `y` anchors at the start; `s` turns `.` into `[\s\S]`; `i` is expanded for ASCII
 * letters; `m` is accepted only when the pattern has no `^`/`$`. Anything else throws with the
 * reason.
 *
 * @internal
 */
export function regExpToPattern(regexp: RegExp): string {
  const flags = regexp.flags;
  const unicode = flags.includes('u') || flags.includes('v');
  const icase = flags.includes('i');
  if (icase && flags.includes('v')) throw new Error("the 'i' flag cannot be expanded for 'v'-mode classes");
  let source = rewritePattern(regexp.source, {
    unicode,
    icase,
    dotAll: flags.includes('s'),
    multiline: flags.includes('m'),
  });
  if (flags.includes('y')) source = `^(?:${source})`;
  try {
    new RegExp(source, 'u');
  } catch (error) {
    throw new Error(`it is not valid in Unicode mode, which JSON Schema patterns use (${(error as Error).message})`);
  }
  return source;
}

interface RewriteOptions {
  unicode: boolean;
  icase: boolean;
  dotAll: boolean;
  multiline: boolean;
}

interface Escape {
  /** Replacement text, valid in Unicode mode. */
  text: string;
  end: number;
  /** The single character it stands for, when it is a character escape. */
  codePoint?: number;
  /** An identity escape (`\.`): the character is meant literally and may be re-escaped. */
  identity?: boolean;
  kind: 'char' | 'class' | 'assertion' | 'backref' | 'property';
}

const LOWER_A = 0x61;
const LOWER_Z = 0x7a;
const UPPER_A = 0x41;
const UPPER_Z = 0x5a;
const SYNTAX = '^$\\.*+?()[]{}|/';
const QUANTIFIER = /^\{\d+(,\d*)?\}/;

function rewritePattern(source: string, options: RewriteOptions): string {
  // Unicode-mode sources already mean the same under Ajv's 'u'; only flags need rewriting.
  if (options.unicode && !options.icase && !options.dotAll && !options.multiline) return source;
  const chars = Array.from(source);
  let out = '';
  let i = 0;
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '\\') {
      const escape = readEscape(chars, i, options, false);
      out += emitOutsideClass(escape, options);
      i = escape.end;
    } else if (c === '[') {
      const end = findClassEnd(chars, i);
      out += options.unicode && !options.icase ? chars.slice(i, end).join('') : rebuildClass(chars, i, end, options);
      i = end;
    } else if (c === '(' && chars[i + 1] === '?' && chars[i + 2] === '<' && chars[i + 3] !== '=' && chars[i + 3] !== '!') {
      const close = chars.indexOf('>', i);
      const end = close < 0 ? chars.length : close + 1;
      out += chars.slice(i, end).join(''); // a group name is not matched text
      i = end;
    } else if (c === '{' && !options.unicode) {
      const quantifier = QUANTIFIER.exec(chars.slice(i, i + 24).join(''))?.[0];
      out += quantifier ?? '\\{'; // without 'u' a brace that is no quantifier is a literal
      i += quantifier ? Array.from(quantifier).length : 1;
    } else {
      if (c === '.' && options.dotAll) out += '[\\s\\S]';
      else if ((c === '^' || c === '$') && options.multiline) {
        throw new Error("the 'm' flag changes what ^ and $ match, which a flag-less pattern cannot express");
      } else if ((c === '}' || c === ']') && !options.unicode) out += `\\${c}`;
      else out += options.icase ? foldChar(c.codePointAt(0)!, c) : c;
      i += 1;
    }
  }
  return out;
}

function readEscape(chars: readonly string[], start: number, options: RewriteOptions, inClass: boolean): Escape {
  const c = chars[start + 1];
  const hex = (from: number, length: number) => {
    const digits = chars.slice(from, from + length).join('');
    return digits.length === length && /^[0-9A-Fa-f]+$/.test(digits) ? Number.parseInt(digits, 16) : undefined;
  };
  const text = (end: number) => chars.slice(start, end).join('');
  if (c === undefined) return { text: '\\', end: start + 1, kind: 'char' };
  if ('dDwWsS'.includes(c)) return { text: text(start + 2), end: start + 2, kind: 'class' };
  if (c === 'b' && inClass) return { text: '\\b', end: start + 2, codePoint: 8, kind: 'char' };
  if (c === 'b' || c === 'B') return { text: text(start + 2), end: start + 2, kind: 'assertion' };
  const controls: Record<string, number> = { f: 12, n: 10, r: 13, t: 9, v: 11 };
  if (controls[c] !== undefined) return { text: text(start + 2), end: start + 2, codePoint: controls[c], kind: 'char' };
  if (c === '0' && !/[0-9]/.test(chars[start + 2] ?? '')) return { text: '\\0', end: start + 2, codePoint: 0, kind: 'char' };
  if (inClass && !options.unicode && /[0-7]/.test(c)) {
    // Legacy octal escape, only meaningful without 'u'.
    let end = start + 1;
    while (end < start + 4 && /[0-7]/.test(chars[end] ?? '')) end += 1;
    const codePoint = Number.parseInt(chars.slice(start + 1, end).join(''), 8);
    return { text: `\\u${codePoint.toString(16).padStart(4, '0')}`, end, codePoint, kind: 'char' };
  }
  if (c === 'x') {
    const value = hex(start + 2, 2);
    if (value !== undefined) return { text: text(start + 4), end: start + 4, codePoint: value, kind: 'char' };
  }
  if (c === 'u') {
    if (chars[start + 2] === '{' && options.unicode) {
      const close = chars.indexOf('}', start);
      const value = close > 0 ? Number.parseInt(chars.slice(start + 3, close).join(''), 16) : Number.NaN;
      if (!Number.isNaN(value)) return { text: text(close + 1), end: close + 1, codePoint: value, kind: 'char' };
    }
    const value = hex(start + 2, 4);
    if (value !== undefined) return { text: text(start + 6), end: start + 6, codePoint: value, kind: 'char' };
  }
  if (c === 'c' && /[A-Za-z]/.test(chars[start + 2] ?? '')) {
    return { text: text(start + 3), end: start + 3, codePoint: chars[start + 2]!.charCodeAt(0) % 32, kind: 'char' };
  }
  if (c === 'p' || c === 'P') {
    if (!options.unicode) {
      throw new Error(`"\\${c}" means the letter "${c}" without the 'u' flag but a Unicode property escape with it`);
    }
    const close = chars.indexOf('}', start);
    const end = close < 0 ? start + 2 : close + 1;
    return { text: text(end), end, kind: 'property' };
  }
  if (c === 'k' && chars[start + 2] === '<') {
    const close = chars.indexOf('>', start);
    const end = close < 0 ? start + 2 : close + 1;
    return { text: text(end), end, kind: 'backref' };
  }
  if (/[1-9]/.test(c) && !inClass) {
    let end = start + 2;
    while (/[0-9]/.test(chars[end] ?? '')) end += 1;
    return { text: text(end), end, kind: 'backref' };
  }
  // An identity escape such as \. or \/; without 'u' also \- or \a ("a"), which 'u' rejects.
  const literal = options.unicode || SYNTAX.includes(c) ? text(start + 2) : c;
  return { text: literal, end: start + 2, codePoint: c.codePointAt(0)!, identity: true, kind: 'char' };
}

function emitOutsideClass(escape: Escape, options: RewriteOptions): string {
  if (!options.icase) return escape.text;
  if (escape.kind === 'backref') throw new Error("a backreference under the 'i' flag matches case-insensitively");
  if (escape.kind === 'property') throw new Error("a Unicode property escape under the 'i' flag changes meaning");
  if (escape.kind === 'char' && escape.codePoint !== undefined && caseVariant(escape.codePoint) !== undefined) {
    return foldChar(escape.codePoint, escape.text);
  }
  return escape.text;
}

/** `a` → `[aA]`; other characters keep their text. */
function foldChar(codePoint: number, text: string): string {
  const variant = caseVariant(codePoint);
  if (variant === undefined) return text;
  return `[${String.fromCodePoint(codePoint)}${String.fromCodePoint(variant)}]`;
}

/** The other case of an ASCII letter; throws for non-ASCII letters, whose JS folding has no exact flag-less form. */
function caseVariant(codePoint: number): number | undefined {
  if (codePoint >= LOWER_A && codePoint <= LOWER_Z) return codePoint - 32;
  if (codePoint >= UPPER_A && codePoint <= UPPER_Z) return codePoint + 32;
  if (codePoint >= 0x80 && isCased(codePoint)) {
    throw new Error(`the 'i' flag is only expanded for ASCII letters, not "${String.fromCodePoint(codePoint)}"`);
  }
  return undefined;
}

function isCased(codePoint: number): boolean {
  const ch = String.fromCodePoint(codePoint);
  return ch.toLowerCase() !== ch || ch.toUpperCase() !== ch;
}

function findClassEnd(chars: readonly string[], start: number): number {
  let i = start + 1;
  if (chars[i] === '^') i += 1;
  while (i < chars.length && chars[i] !== ']') i += chars[i] === '\\' ? 2 : 1;
  return Math.min(i + 1, chars.length);
}

interface ClassAtom {
  text: string;
  codePoint?: number;
  /** An unescaped `-`, the only one that can form a range. */
  rangeDash?: boolean;
}

/**
 * Re-emits a character class so it is valid in Unicode mode (escaping literal `-`, `[`, `]`, `^`)
 * and, under `i`, adds the other case of every ASCII letter it covers.
 */
function rebuildClass(chars: readonly string[], start: number, end: number, options: RewriteOptions): string {
  let i = start + 1;
  const negated = chars[i] === '^';
  if (negated) i += 1;
  const atoms: ClassAtom[] = [];
  const last = end - 1; // the closing ]
  while (i < last) {
    if (chars[i] === '\\') {
      const escape = readEscape(chars, i, options, true);
      if (escape.kind === 'property' && options.icase) {
        throw new Error("a Unicode property escape under the 'i' flag changes meaning");
      }
      const text = escape.identity ? classLiteral(String.fromCodePoint(escape.codePoint!)) : escape.text;
      atoms.push({ text, codePoint: escape.codePoint });
      i = escape.end;
    } else {
      const ch = chars[i]!;
      atoms.push({ text: classLiteral(ch), codePoint: ch.codePointAt(0)!, rangeDash: ch === '-' });
      i += 1;
    }
  }
  const parts: string[] = [];
  const extra: string[] = [];
  for (let k = 0; k < atoms.length; k++) {
    const atom = atoms[k]!;
    const dash = atoms[k + 1];
    const next = atoms[k + 2];
    if (atom.codePoint !== undefined && dash?.rangeDash && next?.codePoint !== undefined) {
      parts.push(`${atom.text}-${next.text}`);
      if (options.icase) extra.push(...foldRange(atom.codePoint, next.codePoint));
      k += 2;
    } else {
      parts.push(atom.text);
      if (options.icase && atom.codePoint !== undefined) {
        const variant = caseVariant(atom.codePoint);
        if (variant !== undefined) extra.push(String.fromCodePoint(variant));
      }
    }
  }
  return `[${negated ? '^' : ''}${parts.join('')}${extra.join('')}]`;
}

function foldRange(from: number, to: number): string[] {
  const extra: string[] = [];
  const lowFrom = Math.max(from, LOWER_A);
  const lowTo = Math.min(to, LOWER_Z);
  if (lowFrom <= lowTo) extra.push(`${String.fromCodePoint(lowFrom - 32)}-${String.fromCodePoint(lowTo - 32)}`);
  const upFrom = Math.max(from, UPPER_A);
  const upTo = Math.min(to, UPPER_Z);
  if (upFrom <= upTo) extra.push(`${String.fromCodePoint(upFrom + 32)}-${String.fromCodePoint(upTo + 32)}`);
  // A non-ASCII range is only safe if it already holds both cases of every letter in it.
  for (let cp = Math.max(from, 0x80); cp <= to; cp++) {
    if (!isCased(cp)) continue;
    const ch = String.fromCodePoint(cp);
    for (const variant of [ch.toLowerCase(), ch.toUpperCase()]) {
      const other = variant.codePointAt(0)!;
      if ([...variant].length === 1 && other !== cp && (other < from || other > to)) {
        throw new Error(`the 'i' flag is only expanded for ASCII letters, not "${ch}"`);
      }
    }
  }
  return extra;
}

function classLiteral(ch: string): string {
  return '\\]^-['.includes(ch) ? `\\${ch}` : ch;
}
