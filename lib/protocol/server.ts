// Old path and name, kept for the transports until they move to the engine: import ./dispatcher.js instead.
export { McpDispatcher as McpServer, isObject } from './dispatcher.js';
