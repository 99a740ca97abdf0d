import assert from 'node:assert/strict';
import { rpc } from './clients.js';

/**
 * Opens a legacy session the raw way (initialize, then notifications/initialized) and returns its
 * id: 2025-11-25 unless `protocolVersion` says otherwise (2025-03-26 for batches), with `headers`
 * (a bearer token) on both requests.
 */
export async function legacySession(
  url: string,
  clientName: string,
  options: { headers?: Record<string, string>; protocolVersion?: string } = {},
): Promise<string> {
  const protocolVersion = options.protocolVersion ?? '2025-11-25';
  const init = await rpc(
    url,
    {
      jsonrpc: '2.0',
      id: `initialize-${clientName}`,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: clientName, version: '1' } },
    },
    { headers: options.headers },
  );
  assert.equal(init.status, 200, init.text);
  const sessionId = init.headers.get('mcp-session-id');
  assert.ok(sessionId, 'initialize answers an Mcp-Session-Id');
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, headers: { 'MCP-Protocol-Version': protocolVersion, ...options.headers } });
  return sessionId;
}
