// mcp-use (TypeScript): MCPClient of `mcp-use/client`, version 1.34.6 — from 2.0 on the
// `mcp-use` package is a server framework and its client moved to `@mcp-use/client`, which the
// npm registry does not serve. The client's PostHog telemetry stays off
// (the spec sets MCP_USE_ANONYMIZED_TELEMETRY=false).
import { MCPClient } from 'mcp-use/client';
import { drive, fromCallToolResult } from './driver.mjs';

await drive({
  client: 'mcp-use',
  packageName: 'mcp-use',
  async connect(url) {
    const client = new MCPClient({ mcpServers: { server: { url } } });
    const session = await client.createSession('server');
    const call = async (name, args) => fromCallToolResult(await session.callTool(name, args));
    return {
      listTools: () => session.listTools(),
      callTool: call,
      callUnlisted: call,
      listResources: async () => (await session.listAllResources()).resources.map((r) => r.uri),
      readResource: async (uri) => (await session.readResource(uri)).contents,
      listPrompts: async () => (await session.listPrompts()).prompts.map((p) => p.name),
      getPrompt: async (name, args) => (await session.getPrompt(name, args)).messages,
      close: () => client.closeAllSessions(),
    };
  },
});
