/** Every user-facing message of the Nest glue: what failed, which thing, how to fix it. */

export const INVALID_OPTIONS = (problem: string) =>
  `McpModule options are invalid: ${problem}. Check the object passed to McpModule.forRoot() or returned by forRootAsync()'s factory.`;

export const INVALID_TOOL_NAME = (name: string, site: string, pattern: RegExp) =>
  `Tool name "${name}" declared by "${site}" does not match ${String(pattern)}. Rename it with @Tool({ name }) or widen McpModule's toolNamePattern option (the spec allows letters, digits, "_", "-" and "." up to 128 characters; several popular clients accept only ${String(/^[A-Za-z0-9_-]{1,64}$/)}).`;

export const DUPLICATE_TOOL = (
  name: string,
  first: { site: string; rename?: string },
  second: { site: string; rename?: string },
) =>
  first.rename === undefined && second.rename === undefined
    ? `Tool "${name}" is declared twice: by "${first.site}" and by "${second.site}". Tool names must be unique within one McpModule; rename one with @Tool({ name }).`
    : `Tool "${name}" is declared twice: by "${first.site}" and by "${second.site}". Tool names must be unique within one McpModule; rename one: ` +
      `for ${first.site}, ${first.rename ?? 'with @Tool({ name })'}; for ${second.site}, ${second.rename ?? 'with @Tool({ name })'}.`;

export const TOOL_DUPLICATE_RUNTIME = (name: string) =>
  `Tool "${name}" is already registered. Remove it first with McpRegistry.removeTool("${name}") or pick another name.`;

export const TOOLS_NEED_MODULE = (name: string) =>
  `Tool "${name}" cannot be added: this McpRegistry was made outside McpModule, which gives a registry the tools pack that builds tool runtimes.`;

export const MULTIPLE_ARGS_PARAMS = (site: string) =>
  `"${site}" has more than one @Args() parameter. A tool receives one arguments object; use a single DTO.`;

export const AMBIGUOUS_INPUT = (site: string) =>
  `Cannot tell the input DTO of tool "${site}": the @Args() parameter's type is not a class (interfaces, unions and primitives vanish at runtime). Declare it with @Tool({ input: SomeDto }) or type the parameter with a DTO class.`;

/** Decorators that write Nest's route-arguments metadata, by the parameter type number they write. */
const FOREIGN_PARAM_DECORATORS: Readonly<Record<number, string>> = {
  0: '@Req() (@nestjs/common), @Parent()/@Root() (@nestjs/graphql) or @ConnectedSocket() (@nestjs/websockets)',
  1: '@Res() (@nestjs/common) or @Context() (@nestjs/graphql)',
  2: '@Next() (@nestjs/common) or @Info() (@nestjs/graphql)',
  3: '@Body() (@nestjs/common), @Args() (@nestjs/graphql), @Payload() (@nestjs/microservices) or @MessageBody() (@nestjs/websockets)',
  4: '@Query() (@nestjs/common)',
  5: '@Param() (@nestjs/common)',
  6: '@Headers() (@nestjs/common) or @Ctx() (@nestjs/microservices)',
  7: '@Session() (@nestjs/common)',
  8: '@UploadedFile() (@nestjs/common)',
  9: '@UploadedFiles() (@nestjs/common)',
  10: '@HostParam() (@nestjs/common)',
  11: '@Ip() (@nestjs/common)',
  12: '@RawBody() (@nestjs/common)',
};

export const FOREIGN_PARAM_DECORATOR = (site: string, what: string, index: number, type: string) =>
  `McpModule: parameter ${index} of ${what} "${site}" carries a parameter decorator this module does not read ` +
  `(${FOREIGN_PARAM_DECORATORS[Number(type)] ?? `another package's decorator, parameter type "${type}"`}), so it would receive undefined. ` +
  `MCP methods take @Args() (the validated arguments, or @Args('field') for one), @Ctx() and @McpRequest() imported from 'nestjs-model-context', ` +
  `or a decorator made with Nest's createParamDecorator. Fix the import (an editor's auto-import may have picked another package's Args or Ctx).`;

export const INVALID_X_MCP_HEADER = (site: string, problem: string) =>
  `Tool "${site}" has an invalid x-mcp-header declaration: ${problem}. x-mcp-header may only mark string, integer or boolean properties reachable through "properties" alone, with a unique RFC 9110 token name.`;

export const SCHEMA_FAILED = (site: string, message: string) => `Cannot build the schema of "${site}": ${message}`;

export const ENDPOINT_READY = (path: string, tools: number) =>
  `MCP endpoint /${path} ready with ${tools} tool${tools === 1 ? '' : 's'}.`;

export const INVALID_RESOURCE_URI = (uri: string, site: string, problem: string) =>
  `Resource URI ${JSON.stringify(uri)} declared by "${site}" is invalid: ${problem}. Give an absolute RFC 3986 URI such as "docs://readme" or "file:///srv/report.csv".`;

export const INVALID_RESOURCE_OPTION = (site: string, problem: string) =>
  `Resource "${site}" has an invalid option: ${problem}.`;

export const INVALID_URI_TEMPLATE = (template: string, site: string, problem: string) =>
  `Resource template ${JSON.stringify(template)} declared by "${site}" is invalid: ${problem}`;

export const TEMPLATE_DTO_MISMATCH = (site: string, template: string, problem: string) =>
  `The variables DTO of resource template "${template}" (declared by "${site}") does not fit the template: ${problem}. Give the DTO exactly one property per template variable.`;

export const DUPLICATE_RESOURCE = (uri: string, first: string, second: string) =>
  `Resource "${uri}" is declared twice: by "${first}" and by "${second}". Resource URIs must be unique within one McpModule.`;

export const DUPLICATE_RESOURCE_TEMPLATE = (template: string, first: string, second: string) =>
  `Resource template "${template}" is declared twice: by "${first}" and by "${second}". Templates must be unique within one McpModule.`;

export const RESOURCE_SHADOWED = (uri: string, uriSite: string, template: string, templateSite: string) =>
  `Resource "${uri}" (declared by "${uriSite}") is shadowed by resource template "${template}" (declared by "${templateSite}"), which also matches that URI, so a read could mean either. Change the URI or the template so that they do not overlap (for example give the template a different literal prefix).`;

export const INVALID_PROMPT_NAME = (name: string, site: string, pattern: RegExp) =>
  `Prompt name ${JSON.stringify(name)} declared by "${site}" does not match ${String(pattern)}. Rename it with @Prompt({ name }): letters, digits, "_", "-" and "." up to 128 characters.`;

export const PROMPT_NEEDS_DESCRIPTION = (name: string, site: string) =>
  `Prompt "${name}" declared by "${site}" has no description. Add @Prompt({ description }): clients show it when users pick a prompt.`;

export const PROMPT_ARGUMENT_NOT_FLAT = (site: string, property: string) =>
  `Prompt "${site}" cannot use "${property}" as an argument: prompt arguments arrive as flat strings, so each DTO property must be a string, number, integer, boolean or enum. Move nested objects and arrays out of the arguments DTO.`;

export const DUPLICATE_PROMPT = (name: string, first: string, second: string) =>
  `Prompt "${name}" is declared twice: by "${first}" and by "${second}". Prompt names must be unique within one McpModule; rename one with @Prompt({ name }).`;

export const RUNTIME_DUPLICATE = (what: string, key: string, remove: string) =>
  `${what} "${key}" is already registered. Remove it first with McpRegistry.${remove}(${JSON.stringify(key)}) or pick another one.`;

export const MULTIPLE_ARGS_PARAMS_OF = (site: string, what: string) =>
  `"${site}" has more than one @Args() parameter that takes the whole object. A ${what} receives one object; use a single DTO, or @Args('name') for single values.`;

export const COMPLETE_UNKNOWN_TARGET = (site: string, target: string, known: string[]) =>
  `@Complete on "${site}" points at ${target}, which is not registered. ${known.length ? `Registered: ${known.join(', ')}.` : 'None are registered.'} Fix the name (templates are matched by their exact uriTemplate).`;

export const COMPLETE_UNKNOWN_ARGUMENT = (site: string, target: string, argument: string, known: string[]) =>
  `@Complete on "${site}" completes argument "${argument}" of ${target}, which has no such argument. Its arguments: ${known.map((k) => `"${k}"`).join(', ') || 'none'}.`;

export const DUPLICATE_COMPLETER = (target: string, argument: string, first: string, second: string) =>
  `Argument "${argument}" of ${target} has two completers: "${first}" and "${second}". Keep one.`;

export const AMBIGUOUS_ARGS = (site: string, what: string) =>
  `Cannot tell the arguments DTO of ${what} "${site}": the @Args() parameter's type is not a class (interfaces, unions and primitives vanish at runtime). Declare it with { args: SomeDto } or type the parameter with a DTO class.`;

export const RUNTIME_ENHANCER_UNKNOWN = (site: string, kind: string, name: string) =>
  `${site}: the ${kind} ${name || '(anonymous class)'} in "decorators" is not provided by the application as a singleton, so it could not run (Nest would skip it silently). Add ${name || 'it'} to the providers of a module (default scope), or pass an instance instead of the class.`;

export const RUNTIME_DECORATORS_WITHOUT_NEST = (site: string) =>
  `${site}: "decorators" need the Nest pipeline, which a McpRegistry created outside McpModule does not have. Get the registry from the application (it is exported by McpModule).`;

export const SCOPES_NOT_ON_CAPABILITY = (site: string) =>
  `@RequireScopes on "${site}" cannot be enforced: it is not on a @Tool, @Resource, @ResourceTemplate, @Prompt, @Complete or @Skill method (or a class that has one), and McpModule enforces scopes on MCP capabilities only. Move it onto the capability, or protect an HTTP route with a guard of its own.`;

export const INVALID_REPOSITORY = (site: string, problem: string) => `Repository "${site}" is invalid: ${problem}.`;

export const REPOSITORY_OVERLAP = (
  what: string,
  prefix: string,
  site: string,
  otherPrefix: string,
  otherSite: string,
) =>
  `${what} prefix "${prefix}" (repository "${site}") overlaps prefix "${otherPrefix}" (repository "${otherSite}"): a name under one could be under the other, so the server could not tell which repository serves it. Give them disjoint prefixes, for example end each with a distinct segment such as "docs://kb/" and "docs://archive/".`;

export const TEMPLATE_OVERLAPS_REPOSITORY = (
  template: string,
  templateSite: string,
  prefix: string,
  repositorySite: string,
) =>
  `Resource template "${template}" (declared by "${templateSite}") can match URIs under "${prefix}", the prefix owned by resource repository "${repositorySite}", so a read could mean either. Give the template a literal prefix outside "${prefix}", or serve those URIs from the repository alone.`;

export const RESOURCE_UNDER_REPOSITORY = (uri: string, uriSite: string, prefix: string, repositorySite: string) =>
  `Resource "${uri}" (declared by "${uriSite}") lies under "${prefix}", the prefix owned by resource repository "${repositorySite}", so a read could mean either. Move the resource outside the prefix, or let the repository list and read it.`;

export const PROMPT_UNDER_REPOSITORY = (name: string, promptSite: string, prefix: string, repositorySite: string) =>
  `Prompt "${name}" (declared by "${promptSite}") starts with "${prefix}", the name prefix owned by prompt repository "${repositorySite}", so prompts/get could mean either. Rename the prompt, or let the repository list and serve it.`;
