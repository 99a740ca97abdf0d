/** Every user-facing message of the Nest glue: what failed, which thing, how to fix it. */

export const INVALID_OPTIONS = (problem: string) =>
  `McpModule options are invalid: ${problem}. Check the object passed to McpModule.forRoot() or returned by forRootAsync()'s factory.`;

export const INVALID_TOOL_NAME = (name: string, site: string, pattern: RegExp) =>
  `Tool name "${name}" declared by "${site}" does not match ${String(pattern)}. Rename it with @Tool({ name }) or widen McpModule's toolNamePattern option (the spec allows letters, digits, "_", "-" and "." up to 128 characters; several popular clients accept only ${String(/^[A-Za-z0-9_-]{1,64}$/)}).`;

export const DUPLICATE_TOOL = (name: string, first: string, second: string) =>
  `Tool "${name}" is declared twice: by "${first}" and by "${second}". Tool names must be unique within one McpModule; rename one with @Tool({ name }).`;

export const TOOL_DUPLICATE_RUNTIME = (name: string) =>
  `Tool "${name}" is already registered. Remove it first with McpRegistry.removeTool("${name}") or pick another name.`;

export const MULTIPLE_ARGS_PARAMS = (site: string) =>
  `"${site}" has more than one @Args() parameter. A tool receives one arguments object; use a single DTO.`;

export const AMBIGUOUS_INPUT = (site: string) =>
  `Cannot tell the input DTO of tool "${site}": the @Args() parameter's type is not a class (interfaces, unions and primitives vanish at runtime). Declare it with @Tool({ input: SomeDto }) or type the parameter with a DTO class.`;

export const REQUEST_SCOPED_TOOL = (site: string) =>
  `"${site}" is declared on a request-scoped provider (or one that depends on a request-scoped provider). Request-scoped tool providers are not supported yet: make the provider a singleton and inject request data through @Ctx().request, or move the tool to a singleton provider.`;

export const INVALID_X_MCP_HEADER = (site: string, problem: string) =>
  `Tool "${site}" has an invalid x-mcp-header declaration: ${problem}. x-mcp-header may only mark string, integer or boolean properties reachable through "properties" alone, with a unique RFC 9110 token name.`;

export const SCHEMA_FAILED = (site: string, message: string) => `Cannot build the schema of "${site}": ${message}`;

export const ENDPOINT_READY = (path: string, tools: number) =>
  `MCP endpoint /${path} ready with ${tools} tool${tools === 1 ? '' : 's'}.`;
