import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { SamplingRequest } from '../protocol/interaction.js';
import type { McpTestElicitation, McpTestInputHandlers } from './interfaces.js';
import { McpTestError } from './mcp-test-error.js';

/**
 * The client's answer to what the server asked during `call` (elicitation, sampling, roots,
 * ping), from the call's handlers, else the client's; a question without a handler throws.
 */
export async function clientAnswer(
  call: string,
  method: string,
  params: Record<string, any>,
  handlers: McpTestInputHandlers,
  defaults: McpTestInputHandlers,
): Promise<JsonObject> {
  const missing = (option: string): McpTestError =>
    new McpTestError(
      ErrorCode.MethodNotFound,
      `${call} sent "${method}" to the client, and the test gave no ${option} handler: pass { ${option} } to callTool() or McpTestClient.create().`,
      params,
      call,
    );
  switch (method) {
    case 'elicitation/create': {
      const handler = handlers.onElicit ?? defaults.onElicit;
      if (!handler) throw missing('onElicit');
      return (await handler(params as McpTestElicitation)) as unknown as JsonObject;
    }
    case 'sampling/createMessage': {
      const handler = handlers.onSample ?? defaults.onSample;
      if (!handler) throw missing('onSample');
      return (await handler(params as SamplingRequest)) as JsonObject;
    }
    case 'roots/list': {
      const handler = handlers.onRoots ?? defaults.onRoots;
      if (!handler) throw missing('onRoots');
      return { roots: await handler() } as unknown as JsonObject;
    }
    case 'ping':
      return {};
    default:
      throw new McpTestError(
        ErrorCode.MethodNotFound,
        `${call} sent "${method}" to the client, which McpTestClient does not answer.`,
        params,
        call,
      );
  }
}
