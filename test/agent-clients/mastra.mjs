// Mastra: MCPClient of @mastra/mcp (built on @modelcontextprotocol/client 2.x). Its tools are
// Mastra tools, run with `execute` as an agent runs them. Variants: `default` probes with
// server/discover; `legacy` pins the initialize handshake (`protocolVersion: 'legacy'`).
// Mastra declares `io.modelcontextprotocol/ui` on every connection, with no mimeTypes.
import { MCPClient } from '@mastra/mcp';
import { drive, fromCallToolResult } from './driver.mjs';

let instances = 0;

await drive({
  client: 'Mastra',
  packageName: '@mastra/mcp',
  async connect(url, variant) {
    const mcp = new MCPClient({
      // Mastra refuses two clients of the same config in one process without distinct ids.
      id: `agent-clients-${(instances += 1)}`,
      servers: { server: { url: new URL(url), ...(variant === 'legacy' ? { protocolVersion: 'legacy' } : {}), enableServerLogs: false } },
    });
    // Mastra names each tool `<server>_<tool>`.
    const toolsByName = async () => {
      const toolsets = await mcp.listToolsets();
      return Object.fromEntries(Object.entries(toolsets.server ?? {}).map(([key, tool]) => [key.replace(/^server_/, ''), tool]));
    };
    return {
      listTools: async () => Object.entries(await toolsByName()).map(([name, tool]) => ({ name, _meta: tool.mcp?._meta })),
      callTool: async (name, args) => {
        const tool = (await toolsByName())[name];
        if (!tool) throw new Error(`Mastra's tool set has no ${name}`);
        const result = await tool.execute(args, {});
        // A tool result with structuredContent comes back as that object; otherwise the CallToolResult.
        if (result && Array.isArray(result.content)) return fromCallToolResult(result);
        return { isError: false, text: typeof result === 'string' ? result : JSON.stringify(result), structured: result };
      },
      listResources: async () => ((await mcp.resources.list()).server ?? []).map((r) => r.uri),
      readResource: async (uri) => (await mcp.resources.read('server', uri)).contents,
      listPrompts: async () => ((await mcp.prompts.list()).server ?? []).map((p) => p.name),
      getPrompt: async (name, args) => (await mcp.prompts.get({ serverName: 'server', name, args })).messages,
      close: () => mcp.disconnect(),
    };
  },
});
