/**
 * `nestjs-model-context/testing`: test an app's tools, resources and prompts in process, without
 * a port or an HTTP client. For tests only: nothing here is loaded by the package's main entry,
 * and it needs no test framework.
 */
export { McpTestClient, type McpTestPage } from './mcp-test-client.js';
export { McpTestError } from './mcp-test-error.js';
export type {
  McpTestCallOptions,
  McpTestClientOptions,
  McpTestCompletionRef,
  McpTestElicitation,
  McpTestElicitationAnswer,
  McpTestEra,
  McpTestInputHandlers,
  McpTestLog,
  McpTestProgress,
} from './interfaces.js';
export type { CallToolResult, ContentBlock, ToolDescriptor } from '../protocol/mcp-types.js';
export type { ReadResourceResult } from '../protocol/resource-contents.js';
export type { ResourceDescriptor, ResourceTemplateDescriptor } from '../protocol/resource-contents.js';
export type { GetPromptResult, PromptDescriptor } from '../protocol/prompt-messages.js';
export type { CompletionResult } from '../completion/completion.js';
