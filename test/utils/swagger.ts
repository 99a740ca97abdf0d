/*
 * @nestjs/swagger cannot be installed next to TypeScript 7 (its optional peer is typescript
 * ^5.5 || ^6), so the repository's own tests write the metadata its decorators write, under its
 * keys and in its shapes: ApiProperty is createApiPropertyDecorator + createPropertyDecorator of
 * nestjs/swagger lib/decorators/{api-property.decorator,helpers}.ts (enum arrays and `[X]` types
 * normalised, `type` defaulting to design:type, the ':name' list on the prototype). The consumer
 * app test/consumers/nest11-enterprise runs the real package.
 */
import 'reflect-metadata';

type Options = Record<string, unknown>;

function enumValues(enumType: unknown): unknown[] {
  if (typeof enumType === 'function') return enumValues((enumType as () => unknown)());
  if (Array.isArray(enumType)) return enumType;
  if (!enumType || typeof enumType !== 'object') return [];
  const record = enumType as Record<string, unknown>;
  const numeric = Object.values(record)
    .filter((v) => typeof v === 'number')
    .map(String);
  return Object.keys(record)
    .filter((key) => !numeric.includes(key))
    .map((key) => record[key]);
}

function enumType(values: unknown[]): string {
  if (values.some((v) => typeof v === 'string')) return 'string';
  return values.some((v) => typeof v === 'boolean') ? 'boolean' : 'number';
}

export function ApiProperty(options: Options = {}): PropertyDecorator {
  return (target, key) => {
    let type = options.type;
    let isArray = options.isArray as boolean | undefined;
    if (type && !isArray && Array.isArray(type)) [type, isArray] = [type[0], true];
    const opts: Options = { ...options, type, isArray };
    if (opts.isArray && opts.enum !== undefined) {
      const values = enumValues(opts.enum);
      opts.type = 'array';
      opts.items = { type: enumType(values), enum: values };
      delete opts.enum;
    } else if (opts.enum !== undefined) {
      opts.enum = enumValues(opts.enum);
      opts.type ??= enumType(opts.enum as unknown[]);
    }
    if (Array.isArray(opts.type)) {
      const inner = opts.type[0] as unknown;
      opts.type = 'array';
      opts.items = {
        type: 'array',
        items: { type: typeof inner === 'function' ? inner.name.charAt(0).toLowerCase() + inner.name.slice(1) : inner },
      };
    }
    if (opts.pattern instanceof RegExp) opts.pattern = opts.pattern.source;
    const listed = (Reflect.getMetadata('swagger/apiModelPropertiesArray', target) as string[] | undefined) ?? [];
    if (!listed.includes(`:${String(key)}`))
      Reflect.defineMetadata('swagger/apiModelPropertiesArray', [...listed, `:${String(key)}`], target);
    const defined = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
    const existing = Reflect.getMetadata('swagger/apiModelProperties', target, key) as Options | undefined;
    const designType = Reflect.getMetadata('design:type', target, key) as unknown;
    Reflect.defineMetadata(
      'swagger/apiModelProperties',
      existing ? { ...existing, ...defined } : { type: designType, ...defined },
      target,
      key,
    );
  };
}

export const ApiPropertyOptional = (options: Options = {}): PropertyDecorator =>
  ApiProperty({ ...options, required: false });

export const ApiOkResponse =
  (options: { type: Function; isArray?: boolean }): MethodDecorator =>
  (_t, _k, d) => {
    Reflect.defineMetadata('swagger/apiResponse', { '200': { description: '', ...options } }, d.value as object);
  };
