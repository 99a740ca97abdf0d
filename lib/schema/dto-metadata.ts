import 'reflect-metadata';
import { TransformationType } from 'class-transformer';
import * as transformerStorageModule from 'class-transformer/cjs/storage.js';
import { SchemaGenerationError } from './schema-generation.error.js';
import { getSchemaPropertyNames } from './schema-property.decorator.js';
import { getEffectiveValidationMetadata } from './validation-rules.js';

// What class-transformer (and field initialisers) say about a DTO's properties, read for the emitter.

/** The slice of class-transformer's metadata storage this factory reads (public methods only). */
interface TransformerStorage {
  findTypeMetadata(
    target: Function,
    propertyName: string,
  ): { typeFunction?: (options?: unknown) => Function; options?: { discriminator?: unknown } } | undefined;
  findExposeMetadata(target: Function, propertyName: string): { options?: { name?: string } } | undefined;
  findTransformMetadatas(target: Function, propertyName: string, transformationType: TransformationType): unknown[];
  getExposedProperties(target: Function, transformationType: TransformationType): string[];
  getExcludedProperties(target: Function, transformationType: TransformationType): string[];
  getStrategy(target: Function): 'excludeAll' | 'exposeAll' | 'none';
  /** Not public API, but class-transformer 0.5 (the supported line) has no other list of `@Type` properties. */
  readonly _typeMetadatas?: Map<Function, Map<string, unknown>>;
}

let transformerStorage: TransformerStorage | undefined;

/**
 * class-transformer keeps `@Type`/`@Exclude` metadata in a module-level storage that its index
 * does not export. The package has no `exports` map, so Node (ESM and CJS alike) loads the CJS
 * build for `import 'class-transformer'`; importing `cjs/storage.js` hits the same module cache
 * entry, hence the very storage the decorators wrote to. A static import (no lookup relative to
 * the module URL) keeps this module valid in the CommonJS build too.
 */
export function getTransformerStorage(): TransformerStorage {
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

/** Ancestors first, so inherited properties keep their declaration order ahead of new ones. */
export function propertyNames(type: Function, swaggerNames: Iterable<string>): string[] {
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
  for (const name of swaggerNames) names.add(name);
  for (const name of transformer.getExposedProperties(type, TransformationType.PLAIN_TO_CLASS)) names.add(name);
  return [...names];
}

/** Whether class-transformer leaves the property out when it turns arguments into an instance. */
export function droppedOnInput(type: Function, name: string): boolean {
  return dropped(type, name, TransformationType.PLAIN_TO_CLASS);
}

/** Whether class-transformer leaves the property out when it turns an instance into plain JSON. */
export function droppedOnOutput(type: Function, name: string): boolean {
  return dropped(type, name, TransformationType.CLASS_TO_PLAIN);
}

function dropped(type: Function, name: string, direction: TransformationType): boolean {
  const transformer = getTransformerStorage();
  if (transformer.getExcludedProperties(type, direction).includes(name)) return true;
  return (
    transformer.getStrategy(type) === 'excludeAll' && !transformer.getExposedProperties(type, direction).includes(name)
  );
}

/** Properties that carry `@Type()`, on the class or its ancestors. */
export function typedPropertyNames(type: Function): string[] {
  const byClass = getTransformerStorage()._typeMetadatas;
  const names = new Set<string>();
  for (let t: unknown = type; typeof t === 'function' && t !== Function.prototype; t = Object.getPrototypeOf(t)) {
    for (const name of byClass?.get(t as Function)?.keys() ?? []) names.add(name);
  }
  return [...names];
}

export function callTypeFunction(fn: ((options?: unknown) => Function) | undefined, dto: string, name: string) {
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

/**
 * Field initialisers (the values a missing property really gets, since class-transformer runs the
 * same constructor for every call) and the fields an instance declares: with ES2022 class fields
 * (`useDefineForClassFields`, the default from target ES2022) every declared field is an own
 * property, initialised or not.
 */
export function readDefaults(type: Function): { defaults: Map<string, unknown>; fields: string[] } {
  const defaults = new Map<string, unknown>();
  let fields: string[] = [];
  try {
    const instance = new (type as new () => object)() as Record<string, unknown>;
    fields = Object.keys(instance);
    for (const [key, value] of Object.entries(instance)) if (value !== undefined) defaults.set(key, value);
  } catch {
    // A constructor that needs arguments has no field defaults worth reporting.
  }
  return { defaults, fields };
}
