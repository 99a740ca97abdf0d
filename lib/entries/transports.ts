/**
 * `nestjs-model-context/transports`: serving the module's tools without its HTTP endpoint. stdio
 * (`McpStdio.serve(app)`, for clients that start the server as a process) and in process
 * (`McpInProcessTransport.forApp(app)`: messages in, messages out, no socket).
 */
export {
  McpStdio,
  McpStdioLogger,
  McpStdioServer,
  type McpStdioServeOptions,
  type McpStdioServerOptions,
} from '../transport/stdio.transport.js';
export {
  McpInProcessTransport,
  type McpInProcessSendOptions,
  type McpInProcessTransportOptions,
} from '../transport/in-process.transport.js';
