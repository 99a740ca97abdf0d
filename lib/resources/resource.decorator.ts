import { SetMetadata } from '@nestjs/common';
import { MCP_RESOURCE_METADATA, MCP_RESOURCE_TEMPLATE_METADATA } from '../common/mcp.constants.js';
import type { ResourceOptions, ResourceTemplateOptions } from '../discovery/resource-runtime.factory.js';

/** @internal */
export interface ResourceMetadata extends ResourceOptions {
  methodName: string;
}

/** @internal */
export interface ResourceTemplateMetadata extends ResourceTemplateOptions {
  methodName: string;
}

/**
 * Serves a provider method's result as an MCP resource at a fixed URI. The method may use
 * `@Ctx()` and return a string, a Buffer, an object (sent as JSON), `ResourceContent.*` items,
 * or a full `{ contents }` result; a Promise or an Observable of those works too. Returning
 * `undefined` (or throwing `ResourceNotFoundError`) answers "resource not found".
 *
 * @example
 * ```ts
 * @Resource({ uri: 'docs://readme', mimeType: 'text/markdown', description: 'Project overview' })
 * readme() { return readFile('README.md', 'utf8'); }
 * ```
 * @publicApi
 */
export function Resource(options: ResourceOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: ResourceMetadata = { ...options, methodName: String(propertyKey) };
    SetMetadata(MCP_RESOURCE_METADATA, metadata)(target, propertyKey, descriptor);
  };
}

/**
 * Serves every URI that matches an RFC 6570 template. The matched variables reach the method
 * through `@Args()` (a DTO instance when `args` or the parameter type names one) or
 * `@Args('name')`; the return value is handled as for `@Resource()`.
 *
 * @example
 * ```ts
 * @ResourceTemplate({ uriTemplate: 'notes://{folder}/{id}', mimeType: 'text/markdown' })
 * note(@Args() { folder, id }: NoteRefDto) { return this.notes.find(folder, id)?.body; }
 * ```
 * @publicApi
 */
export function ResourceTemplate(options: ResourceTemplateOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: ResourceTemplateMetadata = { ...options, methodName: String(propertyKey) };
    SetMetadata(MCP_RESOURCE_TEMPLATE_METADATA, metadata)(target, propertyKey, descriptor);
  };
}

/** The `@Resource()` of a method. @internal */
export function resourceOf(method: unknown): ResourceMetadata | undefined {
  return typeof method === 'function'
    ? (Reflect.getMetadata(MCP_RESOURCE_METADATA, method) as ResourceMetadata | undefined)
    : undefined;
}

/** The `@ResourceTemplate()` of a method. @internal */
export function templateOf(method: unknown): ResourceTemplateMetadata | undefined {
  return typeof method === 'function'
    ? (Reflect.getMetadata(MCP_RESOURCE_TEMPLATE_METADATA, method) as ResourceTemplateMetadata | undefined)
    : undefined;
}
