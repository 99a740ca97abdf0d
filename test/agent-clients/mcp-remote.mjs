// mcp-remote: the stdio <-> Streamable HTTP bridge desktop hosts run for remote servers, driven
// as a host drives it, by the official SDK's stdio client (@modelcontextprotocol/sdk 1.x). The
// bridge runs under the same loopback guard. Variants: `legacy` (its default: the client's
// initialize goes through), `auto` (`--protocol auto`: it speaks 2026-07-28 to the server and
// answers the client's handshake itself), `apps` (`auto`, and the client declares MCP Apps).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { drive, fromCallToolResult } from './driver.mjs';

const require = createRequire(import.meta.url);
const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const guard = fileURLToPath(new URL('./loopback-only.mjs', import.meta.url));

await drive({
  client: 'mcp-remote',
  packageName: 'mcp-remote',
  async connect(url, variant) {
    const args = [require.resolve('mcp-remote/dist/proxy.js'), url, '--transport', 'http-only', ...(variant === 'legacy' ? [] : ['--protocol', 'auto'])];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', guard, ...args],
      stderr: 'pipe',
      env: { ...process.env },
    });
    // The bridge's log, passed on so the spec sees refused connections and failures.
    transport.stderr?.on('data', (chunk) => process.stderr.write(chunk));
    let negotiated;
    // The SDK hands the version the handshake settled on to a transport that takes it.
    transport.setProtocolVersion = (version) => (negotiated = version);
    const client = new Client({ name: 'agent-clients-host', version: '1.0.0' }, { capabilities: variant === 'apps' ? APPS : {} });
    await client.connect(transport);
    const call = async (name, args) => fromCallToolResult(await client.callTool({ name, arguments: args }));
    return {
      negotiated: () => negotiated,
      listTools: async () => (await client.listTools()).tools,
      callTool: call,
      callUnlisted: call,
      listResources: async () => (await client.listResources()).resources.map((r) => r.uri),
      readResource: async (uri) => (await client.readResource({ uri })).contents,
      listPrompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
      getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })).messages,
      close: () => client.close(),
    };
  },
});
