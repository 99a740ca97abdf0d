import type { Type } from '@nestjs/common';

/*
 * @nestjs/swagger stores its decorators' data as reflect-metadata under these keys. Reading them
 * here needs no import of the package: an app without Swagger simply has none of them. What
 * @ApiProperty() says of DTO properties is read with the schemas, in lib/schema/swagger-property.ts.
 */
const API_OPERATION = 'swagger/apiOperation';
const API_RESPONSE = 'swagger/apiResponse';
const API_EXCLUDE_ENDPOINT = 'swagger/apiExcludeEndpoint';
const API_EXCLUDE_CONTROLLER = 'swagger/apiExcludeController';
const API_TAGS = 'swagger/apiUseTags';

export interface SwaggerOperation {
  summary?: string;
  description?: string;
}

export function swaggerOperationOf(method: Function): SwaggerOperation | undefined {
  return Reflect.getMetadata(API_OPERATION, method) as SwaggerOperation | undefined;
}

/** The DTO class of the 200 (or 201) response, when declared as a single object. */
export function swaggerOutputOf(method: Function): Type<unknown> | undefined {
  const responses = Reflect.getMetadata(API_RESPONSE, method) as
    Record<string, { type?: unknown; isArray?: boolean }> | undefined;
  for (const status of ['200', '201']) {
    const response = responses?.[status];
    if (response && typeof response.type === 'function' && !response.isArray) return response.type as Type<unknown>;
  }
  return undefined;
}

export function swaggerExcluded(controller: Function, method: Function): boolean {
  const endpoint = Reflect.getMetadata(API_EXCLUDE_ENDPOINT, method) as { disable?: boolean } | undefined;
  const whole = Reflect.getMetadata(API_EXCLUDE_CONTROLLER, controller) as unknown[] | undefined;
  return endpoint?.disable === true || whole?.[0] === true;
}

export function swaggerTagsOf(controller: Function, method: Function): string[] {
  return [
    ...((Reflect.getMetadata(API_TAGS, controller) as string[] | undefined) ?? []),
    ...((Reflect.getMetadata(API_TAGS, method) as string[] | undefined) ?? []),
  ];
}
