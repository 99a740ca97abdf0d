// LangChain: MultiServerMCPClient of @langchain/mcp-adapters (built on @modelcontextprotocol/sdk
// 1.x). Tools are LangChain StructuredTools, called with `invoke` as an agent calls them; a tool
// error comes back as a thrown ToolException. No prompts API; tools are called only as listed.
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { drive, textOf } from './driver.mjs';

await drive({
  client: 'LangChain',
  packageName: '@langchain/mcp-adapters',
  async connect(url) {
    const client = new MultiServerMCPClient({
      mcpServers: { server: { url, transport: 'http' } },
      useStandardContentBlocks: true,
      throwOnLoadError: true,
    });
    const tools = await client.getTools();
    const sdk = await client.getClient('server');
    return {
      negotiated: () => sdk?.transport?.protocolVersion,
      listTools: async () => (await client.getTools()).map((tool) => ({ name: tool.name, _meta: tool.metadata?._meta })),
      callTool: async (name, args) => {
        const tool = tools.find((t) => t.name === name);
        if (!tool) throw new Error(`LangChain's tool list has no ${name}`);
        const message = await tool.invoke({ type: 'tool_call', id: `call-${name}`, name, args });
        // structuredContent travels in the ToolMessage's artifacts.
        const artifacts = Array.isArray(message.artifact) ? message.artifact : [];
        return { isError: message.status === 'error', text: textOf(message.content), structured: artifacts.find((a) => a?.type === 'mcp_structured_content')?.data };
      },
      listResources: async () => (await client.listResources('server')).server.map((r) => r.uri),
      readResource: (uri) => client.readResource('server', uri),
      close: () => client.close(),
    };
  },
});
