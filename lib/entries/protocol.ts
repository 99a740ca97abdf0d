/**
 * `nestjs-model-context/protocol`: the MCP wire types and constants, for code that reads or builds
 * protocol values by hand (content blocks, resource contents, elicitation and sampling, the
 * extensions' identifiers and MIME types, the protocol versions served).
 */
export { LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, type ProtocolEra } from '../protocol/versions.js';
export type {
  AudioContent,
  CacheHint,
  CallToolResult,
  ContentBlock,
  EmbeddedResourceContent,
  ImageContent,
  Implementation,
  LogLevel,
  McpIcon,
  ResourceLinkContent,
  TextContent,
  ToolAnnotations,
} from '../protocol/mcp-types.js';
export type {
  BlobResourceContents,
  ReadResourceResult,
  ResourceAnnotations,
  ResourceContentInput,
  ResourceContents,
  TextResourceContents,
} from '../protocol/resource-contents.js';
export type { GetPromptResult } from '../protocol/prompt-messages.js';
export type { CompletionValues } from '../completion/completion.js';
export type { ElicitOutcome, McpRoot, SamplingRequest, SamplingResult } from '../protocol/interaction.js';
export type { McpAskOptions } from '../protocol/context.js';
export {
  DIRECTORY_MIME_TYPE,
  SKILLS_EXTENSION,
  SkillDefinitionError,
  type SkillEntry,
  type SkillResourceEntry,
} from '../skills/skill-entry.js';
export {
  UI_EXTENSION,
  UI_MIME_TYPE,
  type McpAppResult,
  type McpUiCsp,
  type McpUiPermissions,
  type McpUiResourceMeta,
  type McpUiVisibility,
} from '../apps/apps.js';
export type { StandardSchemaV1, StandardJsonSchemaConverter } from '../schema/standard-schema.js';
