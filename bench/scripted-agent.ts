/**
 * The token bench's measurements, shared by `npm run bench:tokens` and the tool-sets agent spec:
 * the tokens of `tools/list` (full and progressive) counted with a real tokenizer, and a scripted
 * agent (no model) that finds a named tool and calls it through the official SDK v1 and v2 clients
 * and the Vercel AI SDK client, counting the requests it needed.
 */
import { createMCPClient } from '@ai-sdk/mcp';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { encode } from 'gpt-tokenizer';

type Json = Record<string, any>;

/** What the agent needs of a client: the tools it lists, and calls. */
export interface AgentClient {
  readonly label: string;
  /** The protocol version the client negotiated. */
  readonly protocolVersion: string | undefined;
  /** One `tools/list` (first page). */
  listTools(): Promise<Json[]>;
  /** One `tools/call`; the CallToolResult. */
  callTool(name: string, args: Json): Promise<Json>;
  close(): Promise<void>;
}

/** Tokens of a JSON value as a model reads it (o200k, the GPT-4o/GPT-5 encoding). */
export function tokensOf(value: unknown): number {
  return encode(JSON.stringify(value)).length;
}

/** Arguments that satisfy a JSON Schema's required properties (what a model would fill in). */
export function exampleArguments(schema: Json | undefined): Json {
  const out: Json = {};
  for (const name of (schema?.required as string[] | undefined) ?? [])
    out[name] = exampleValue(schema!.properties?.[name] ?? {}, name);
  return out;
}

function exampleValue(schema: Json, name: string): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'array':
      return [exampleValue(schema.items ?? { type: 'string' }, name)];
    case 'object':
      return exampleArguments(schema);
    default:
      if (schema.format === 'email' || /email/i.test(name)) return 'someone@example.com';
      if (schema.format === 'uri' || /url/i.test(name)) return 'https://files.example.com/data.csv';
      if (/date|^from$|^to$|At$/i.test(name)) return '2026-03-15';
      return `sample-${name}`;
  }
}

export interface AgentRun {
  target: string;
  found: boolean;
  called: boolean;
  requests: number;
}

/**
 * Finds `target` and calls it: `tools/list`; if the list has the tool, call it; else
 * `search_tools` with the tool's words, then the call tool the hit names. Each step is one
 * request to the server.
 */
export async function findAndCall(client: AgentClient, target: string): Promise<AgentRun> {
  let requests = 1;
  const listed = await client.listTools();
  let hit: Json | undefined = listed.find((tool) => tool.name === target);
  let call: { name: string; args: Json } | undefined = hit
    ? { name: target, args: exampleArguments(hit.inputSchema) }
    : undefined;
  if (!hit && listed.some((tool) => tool.name === 'search_tools')) {
    requests++;
    const search = await client.callTool('search_tools', { query: target.replace(/_/g, ' ') });
    hit = ((search.structuredContent?.tools as Json[] | undefined) ?? []).find((tool) => tool.name === target);
    if (hit)
      call = { name: hit.callWith as string, args: { name: target, arguments: exampleArguments(hit.inputSchema) } };
  }
  if (!call) return { target, found: false, called: false, requests };
  requests++;
  const result = await client.callTool(call.name, call.args);
  const text = ((result.content as Json[] | undefined) ?? []).map((block) => block.text ?? '').join('');
  return { target, found: true, called: result.isError !== true && text.includes(`${target}: done`), requests };
}

/** `@modelcontextprotocol/sdk` 1.x: 2025-11-25, a session. */
export async function connectSdkV1(url: string): Promise<AgentClient> {
  const client = new ClientV1({ name: 'token-bench-v1', version: '1.0.0' });
  const transport = new TransportV1(new URL(url));
  await client.connect(transport);
  return {
    label: 'official SDK v1',
    protocolVersion: transport.protocolVersion,
    listTools: async () => (await client.listTools()).tools as Json[],
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as Json,
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** `@modelcontextprotocol/client` 2.x pinned to 2026-07-28: stateless. */
export async function connectSdkV2(url: string): Promise<AgentClient> {
  const client = new ClientV2(
    { name: 'token-bench-v2', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(new URL(url)));
  return {
    label: 'official SDK v2',
    protocolVersion: client.getNegotiatedProtocolVersion(),
    listTools: async () => (await client.listTools()).tools as Json[],
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as Json,
    close: () => client.close(),
  };
}

/**
 * The Vercel AI SDK's MCP client as an agent uses it: the tool set built from one listing, each
 * tool run as a model's call is. `initialize` turns its server/discover probe off (2025-11-25).
 */
export async function connectAiSdk(url: string, era: 'modern' | 'legacy'): Promise<AgentClient> {
  const client = await createMCPClient({
    transport: { type: 'http', url },
    clientName: 'token-bench-ai-sdk',
    ...(era === 'legacy' ? { protocolVersionDiscovery: false } : {}),
  });
  let tools: Awaited<ReturnType<typeof client.tools>> | undefined;
  return {
    label: `Vercel AI SDK (${era})`,
    get protocolVersion() {
      return client.initializeResult?.protocolVersion;
    },
    listTools: async () => {
      tools = await client.tools();
      return Object.entries(tools).map(([name, tool]) => ({
        name,
        inputSchema: (tool.inputSchema as { jsonSchema?: Json }).jsonSchema,
      }));
    },
    callTool: async (name, args) => {
      const tool = tools?.[name];
      if (!tool?.execute) throw new Error(`The AI SDK tool set has no "${name}": list the tools first.`);
      return (await tool.execute(args, { toolCallId: `call-${name}`, messages: [], context: {} })) as Json;
    },
    close: () => client.close(),
  };
}

export const AGENT_CLIENTS: ReadonlyArray<{ label: string; connect: (url: string) => Promise<AgentClient> }> = [
  { label: 'official SDK v1 (2025-11-25)', connect: connectSdkV1 },
  { label: 'official SDK v2 (2026-07-28)', connect: connectSdkV2 },
  { label: 'Vercel AI SDK (2026-07-28)', connect: (url) => connectAiSdk(url, 'modern') },
  { label: 'Vercel AI SDK (2025-11-25)', connect: (url) => connectAiSdk(url, 'legacy') },
];

/** Every page of `tools/list` through the v2 client: the tools a client would hand its model. */
export async function allTools(url: string): Promise<Json[]> {
  const client = new ClientV2(
    { name: 'token-bench-lister', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(new URL(url)));
  try {
    const tools: Json[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...(page.tools as Json[]));
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    await client.close();
  }
}
