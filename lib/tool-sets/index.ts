export { ToolSets } from '../decorators/tool-sets.decorator.js';
export type {
  McpToolSetCaller,
  McpToolSetDefinition,
  McpToolListMode,
  McpToolSetsOptions,
} from './tool-sets.options.js';
export { McpToolSets } from './mcp-tool-sets.service.js';
