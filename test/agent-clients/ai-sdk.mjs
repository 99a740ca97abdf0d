// Vercel AI SDK: `createMCPClient` of @ai-sdk/mcp (the package `ai` re-exported it from before
// 6.0). Variants: `default` probes with server/discover (2026-07-28), `initialize` turns the probe
// off (the legacy handshake), `apps` declares MCP Apps with the SDK's own
// `mcpAppClientCapabilities` (mimeTypes: text/html;profile=mcp-app).
import { createMCPClient, mcpAppClientCapabilities } from '@ai-sdk/mcp';
import { drive, fromCallToolResult } from './driver.mjs';

await drive({
  client: 'Vercel AI SDK',
  packageName: '@ai-sdk/mcp',
  async connect(url, variant) {
    const client = await createMCPClient({
      transport: { type: 'http', url },
      clientName: 'agent-clients-ai-sdk',
      ...(variant === 'initialize' ? { protocolVersionDiscovery: false } : {}),
      ...(variant === 'apps' ? { capabilities: mcpAppClientCapabilities } : {}),
    });
    return {
      negotiated: () => client.initializeResult?.protocolVersion,
      listTools: async () => (await client.listTools()).tools,
      // What an agent runs: the AI SDK tool set built from the listing, executed as a model's call is.
      callTool: async (name, args) => {
        const tools = await client.tools();
        if (!tools[name]) throw new Error(`the AI SDK tool set has no ${name}`);
        return fromCallToolResult(await tools[name].execute(args, { toolCallId: `call-${name}`, messages: [] }));
      },
      callUnlisted: async (name, args) => fromCallToolResult(await client.callTool({ name, arguments: args })),
      listResources: async () => (await client.listResources()).resources.map((r) => r.uri),
      readResource: async (uri) => (await client.readResource({ uri })).contents,
      listPrompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
      getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })).messages,
      close: () => client.close(),
    };
  },
});
