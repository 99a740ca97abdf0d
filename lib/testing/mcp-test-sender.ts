import type { INestApplicationContext } from '@nestjs/common';
import type { McpAuthenticator } from '../auth/mcp-authenticator.js';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import { MCP_AUTHENTICATOR } from '../common/mcp.constants.js';
import { McpEndpointAuth, McpEndpointRefusal } from '../transport/endpoint-auth.js';
import type { McpInProcessSendOptions } from '../transport/in-process.transport.js';
import type { McpTestClientOptions } from './interfaces.js';
import { McpTestError } from './mcp-test-error.js';

/** Who calls (and the user the app's auth made), or the endpoint's auth to run per request. */
type McpTestCaller = { principal?: McpPrincipal; user?: unknown } | McpEndpointAuth;

/** The options a test client's next message of `method` is sent with: who sends it. */
export type McpTestSender = (method: string) => Promise<McpInProcessSendOptions>;

/**
 * Who sends a test client's messages, as its options say: a principal given outright or derived
 * from `user`, or, with `authenticate`, the app's own auth, deciding anew each time as per HTTP
 * request.
 */
export function testSenderOf(target: INestApplicationContext, options: McpTestClientOptions): McpTestSender {
  const caller = callerOf(target, options);
  // A request object per message, as per HTTP request: guards may write to it, and a
  // request-scoped provider's instance is bound to it.
  if (!(caller instanceof McpEndpointAuth))
    return async () => ({
      headers: options.headers,
      principal: caller.principal,
      request: requestOf(options.headers, caller.user),
    });
  return async (method) => {
    const request = requestOf(options.headers, undefined);
    try {
      const principal = await caller.authenticate(request);
      return { headers: options.headers, principal, request };
    } catch (error) {
      if (error instanceof McpEndpointRefusal)
        throw new McpTestError(error.code, error.message, { status: error.status }, method);
      throw error;
    }
  };
}

function callerOf(target: INestApplicationContext, options: McpTestClientOptions): McpTestCaller {
  if (options.authenticate) {
    if (options.principal !== undefined || options.user !== undefined) {
      throw new Error(
        'McpTestClient: "authenticate" runs the app\'s own auth, which decides the user and the principal; give it with "headers" only, or drop it and give "principal" / "user".',
      );
    }
    return McpEndpointAuth.forApp(target);
  }
  if (options.user === undefined) return { principal: options.principal };
  const auth = target.get<symbol, McpAuthenticator | null>(MCP_AUTHENTICATOR, { strict: false });
  return {
    principal: options.principal ?? auth?.principalOf(requestOf(options.headers, options.user)),
    user: options.user,
  };
}

/** An HTTP-shaped request: lower-case header names, and `user` when the app's auth set one. */
function requestOf(
  headers: Record<string, string> | undefined,
  user: unknown,
): { headers: Record<string, string>; user?: unknown } {
  const request: { headers: Record<string, string>; user?: unknown } = {
    headers: Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
  };
  if (user !== undefined) request.user = user;
  return request;
}
