import assert from 'node:assert/strict';
import { rpc, type RpcResult } from './clients.js';

/**
 * Opens a legacy session the raw way (initialize, then notifications/initialized) and returns its
 * id. `headers` go on both requests (a bearer token, X-Forwarded-For); `version` is the one asked.
 */
export async function legacySession(url: string, clientName: string, options: { headers?: Record<string, string>; version?: string } = {}): Promise<string> {
  const version = options.version ?? '2025-11-25';
  const init = await rpc(
    url,
    { jsonrpc: '2.0', id: `initialize-${clientName}`, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: clientName, version: '1' } } },
    { headers: options.headers },
  );
  assert.equal(init.status, 200, init.text);
  const sessionId = init.headers.get('mcp-session-id');
  assert.ok(sessionId, 'initialize answers an Mcp-Session-Id');
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, headers: { 'MCP-Protocol-Version': version, ...options.headers } });
  return sessionId;
}

/** One request on a legacy session, with its version header. */
export function legacyRequest(url: string, sessionId: string, id: string | number, method: string, params: Record<string, unknown> = {}, version = '2025-11-25'): Promise<RpcResult> {
  return rpc(url, { jsonrpc: '2.0', id, method, params }, { sessionId, headers: { 'MCP-Protocol-Version': version } });
}
