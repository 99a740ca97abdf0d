import { getMetadataStorage, ValidationTypes, type MetadataStorage } from 'class-validator';
import type { JsonSchema, JsonTypeName } from './json-schema.types.js';
import { patternOf } from './regexp-pattern.js';
import type { SchemaPropertyOptions } from './schema-property.decorator.js';
import { SchemaGenerationError } from './schema-generation.error.js';

// What class-validator constraints say in JSON Schema: the kind each rule implies, the formats
// and keywords it maps to, and how the rules of one value combine.

export type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];
export type Primitive = string | number | boolean | null;
/** A value kind; `date` is a JSON string that class-transformer turns into a `Date`. */
export type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'date';

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
  'contains',
  'notContains',
  'isAlpha',
  'isAlphanumeric',
  'isAscii',
  'isBIC',
  'isBase32',
  'isBase58',
  'isBase64',
  'isBooleanString',
  'isBtcAddress',
  'isByteLength',
  'isCreditCard',
  'isCurrency',
  'isDataURI',
  'isDateString',
  'isDecimal',
  'isEAN',
  'isEmail',
  'isEthereumAddress',
  'isFqdn',
  'IsFirebasePushId',
  'isFullWidth',
  'isHSL',
  'isHalfWidth',
  'isHash',
  'isHexColor',
  'isHexadecimal',
  'isIBAN',
  'isIp',
  'isIsbn',
  'isIsin',
  'isISO31661Alpha2',
  'isISO31661Alpha3',
  'isISO31661Numeric',
  'isIso8601',
  'isISRC',
  'isISSN',
  'isIdentityCard',
  'isJson',
  'isJwt',
  'isLocale',
  'isLowercase',
  'isMacAddress',
  'isMagnetURI',
  'isMilitaryTime',
  'isMimeType',
  'isMobilePhone',
  'isMongoId',
  'isMultibyte',
  'isNumberString',
  'isOctal',
  'isPassportNumber',
  'isPhoneNumber',
  'isPort',
  'isPostalCode',
  'isRFC3339',
  'isRgbColor',
  'isSemVer',
  'isStrongPassword',
  'isSurrogatePair',
  'isTimeZone',
  'isUuid',
  'isUppercase',
  'isUrl',
  'isVariableWidth',
  'isLength',
  'matches',
  'maxLength',
  'minLength',
  'isISO4217CurrencyCode',
  'isTaxId',
  'isISO6391',
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
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
];
const BUILT_IN_RULES = new Set<string>([
  ...Object.keys(EXPLICIT_KINDS),
  ...IMPLIED_KINDS.keys(),
  'isEnum',
  'isIn',
  'isNotIn',
  'equals',
  'notEquals',
  'isEmpty',
  'isNotEmpty',
  'isDefined',
  'isInstance',
  'isLatLong',
  'isLatitude',
  'isLongitude',
  ValidationTypes.NESTED_VALIDATION,
  ValidationTypes.WHITELIST,
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
export class Draft {
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
 * The constraint key class-validator reports for a metadata entry (`isString`, `min`, ...).
 *
 * @internal
 */
export function validationRuleName(meta: ValidationMetadata): string {
  if (meta.name) return meta.name;
  return getMetadataStorage().getTargetValidatorConstraints(meta.constraintCls)[0]?.name ?? meta.type;
}

export function collect(rules: readonly ValidationMetadata[], dto: string, property: string): Draft {
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

export function resolveKind(draft: Draft, dto: string, property: string): Kind | undefined {
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

export function primitiveSchema(
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
    types ??= typesOfValues(values);
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
  for (const keyword of KEYWORD_ORDER)
    if (draft.keywords[keyword] !== undefined) schema[keyword] = draft.keywords[keyword];
  if (more.length > 0) schema.allOf = more.map((pattern) => ({ pattern }));
  return schema;
}

export function acceptsUndefined(meta: ValidationMetadata): boolean {
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

function enumObjectValues(entity: unknown): unknown[] {
  if (!entity || typeof entity !== 'object') return [];
  // Numeric TS enums carry reverse mappings ("0" → "A"); those keys are not members.
  return Object.entries(entity)
    .filter(([key]) => Number.isNaN(Number.parseInt(key, 10)))
    .map(([, value]) => value as unknown);
}

export function enumValuesOf(option: NonNullable<SchemaPropertyOptions['enum']>): Primitive[] {
  const values = Array.isArray(option) ? (option as unknown[]) : enumObjectValues(option);
  return dedupe(values.filter(isJsonPrimitive));
}

export function isJsonPrimitive(value: unknown): value is Primitive {
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

/** The JSON types of a list of values (integers fold into `number` when both occur). */
export function typesOfValues(values: readonly Primitive[]): JsonTypeName[] | undefined {
  const types = new Set<JsonTypeName>();
  for (const value of values) {
    if (value === null) types.add('null');
    else if (typeof value === 'number') types.add(Number.isInteger(value) ? 'integer' : 'number');
    else types.add(typeof value as JsonTypeName);
  }
  if (types.has('number')) types.delete('integer');
  return types.size > 0 ? [...types] : undefined;
}
