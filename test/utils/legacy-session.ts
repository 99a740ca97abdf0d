import assert from 'node:assert/strict';
import { rpc } from './clients.js';

/** Opens a 2025-11-25 session the raw way (initialize, then notifications/initialized) and returns its id. */
export async function legacySession(url: string, clientName: string): Promise<string> {
  const init = await rpc(url, {
    jsonrpc: '2.0',
    id: `initialize-${clientName}`,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: clientName, version: '1' } },
  });
  assert.equal(init.status, 200, init.text);
  const sessionId = init.headers.get('mcp-session-id');
  assert.ok(sessionId, 'initialize answers an Mcp-Session-Id');
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25' } });
  return sessionId;
}
