// OpenAI Agents JS: MCPServerStreamableHttp of @openai/agents-core (the MCP server class an Agent
// takes in `mcpServers`; it speaks through @modelcontextprotocol/client 2.x). No prompts API.
// Tracing stays off (the spec sets OPENAI_AGENTS_DISABLE_TRACING): no run is made anyway.
import { MCPServerStreamableHttp } from '@openai/agents-core';
import { drive, fromCallToolResult } from './driver.mjs';

await drive({
  client: 'OpenAI Agents JS',
  packageName: '@openai/agents-core',
  async connect(url) {
    const server = new MCPServerStreamableHttp({ url, name: 'agent-clients-openai-agents', cacheToolsList: false });
    await server.connect();
    const call = async (name, args) => fromCallToolResult(await server.callToolResult(name, args));
    return {
      listTools: () => server.listTools(),
      callTool: call,
      callUnlisted: call,
      listResources: async () => (await server.listResources()).resources.map((r) => r.uri),
      readResource: async (uri) => (await server.readResource(uri)).contents,
      close: () => server.close(),
    };
  },
});
