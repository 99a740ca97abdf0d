/**
 * Thrown at bootstrap when a DTO property cannot be turned into JSON Schema, or would make every
 * call fail validation. The message names `Dto.property` and says how to fix it.
 *
 * @publicApi
 */
export class SchemaGenerationError extends Error {
  override readonly name = 'SchemaGenerationError';

  constructor(
    /** The DTO class name. */
    readonly dtoName: string,
    /** The property, or `undefined` when the problem concerns the whole class. */
    readonly propertyName: string | undefined,
    reason: string,
    fix: string,
  ) {
    const subject = propertyName === undefined ? dtoName : `${dtoName}.${propertyName}`;
    super(`Cannot generate a JSON Schema for "${subject}": ${reason}. ${fix}`);
  }

  /** @internal */
  static undescribable(dto: string, property: string, designType: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      `its type cannot be determined (design:type is ${designType} and no validator names a type)`,
      'Add a type validator such as @IsString(), or @SchemaProperty({ type }) / @SchemaProperty({ schema }), or @Type(() => X) for a class.',
    );
  }

  /** @internal */
  static arrayWithoutItems(dto: string, property: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      'it is an array but its item type is unknown',
      'Add an each-validator such as @IsString({ each: true }), @Type(() => X), or @SchemaProperty({ items: ... }).',
    );
  }

  /** @internal */
  static nestedWithoutType(dto: string, property: string, hint: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      '@ValidateNested() has no class to validate against, so arguments would stay plain objects and always fail',
      `Add @Type(() => ${hint}) from class-transformer.`,
    );
  }

  /** @internal */
  static nestedWithoutValidation(dto: string, property: string, nested: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      `it holds the DTO class "${nested}" but is not marked for nested validation, so its fields would go unchecked`,
      `Add @ValidateNested() and @Type(() => ${nested}).`,
    );
  }

  /** @internal */
  static nestedWithoutRules(dto: string, property: string, nested: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      `the nested class "${nested}" has no class-validator decorators, so class-validator refuses every instance of it`,
      `Decorate the fields of "${nested}" with class-validator decorators, or describe the property with @IsObject() instead of @ValidateNested().`,
    );
  }

  /** @internal */
  static dateWithoutType(dto: string, property: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      '@IsDate() needs a Date instance but JSON arguments carry strings',
      'Add @Type(() => Date) so the ISO 8601 string is converted before validation.',
    );
  }

  /** @internal */
  static notValidated(dto: string, property: string, describedBy: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      `it is described (by ${describedBy}) but has no class-validator decorator, so validating arguments would refuse it as unknown`,
      'Add a class-validator decorator such as @IsString(), or @Allow() to accept any value. (A class with no class-validator decorator at all is described by its @ApiProperty() options alone.)',
    );
  }

  /** @internal */
  static undescribed(dto: string, property: string, knownFrom: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      `only ${knownFrom} tells of it, which says neither its type nor whether it is always there`,
      'Describe it with @ApiProperty() (type: () => X for a class, type: [X] for an array) or with class-validator decorators, or remove it.',
    );
  }

  /** @internal */
  static noProperties(dto: string): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      undefined,
      'no property of it is described (no class-validator decorator, @ApiProperty() or @SchemaProperty()), so its schema would be an empty closed object that every value fails',
      'Decorate its properties with @ApiProperty() or class-validator decorators, or give a JSON Schema (or Standard Schema) instead of the class.',
    );
  }

  /** @internal */
  static conflictingTypes(dto: string, property: string, types: readonly string[]): SchemaGenerationError {
    return new SchemaGenerationError(
      dto,
      property,
      `its validators require incompatible types (${types.join(', ')}), so no value can pass`,
      'Remove the validator that does not match the intended type.',
    );
  }

  /** @internal */
  static unsupported(dto: string, property: string, what: string, fix: string): SchemaGenerationError {
    return new SchemaGenerationError(dto, property, what, fix);
  }
}
