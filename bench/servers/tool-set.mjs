// The bench tool set as zod schemas, for the peers that take zod: the same tools and input shapes
// bench/echo-server.ts declares with class-validator DTOs (echo, progress, tool_3 … tool_N).
import { z } from 'zod';

export const PROGRESS_STEPS = 100;

export const echoSchema = z.object({ text: z.string() });

const fillerSchemas = [
  z.object({
    title: z.string().min(1).max(200),
    priority: z.enum(['low', 'medium', 'high']).optional(),
    tags: z.array(z.string()).max(10).optional(),
  }),
  z.object({
    query: z.string().min(1).max(100),
    limit: z.number().int().min(1).max(100).optional(),
    page: z.number().int().min(0).optional(),
  }),
  z.object({
    id: z.uuid(),
    owner: z.object({ name: z.string().min(1).max(80), email: z.email() }),
  }),
  z.object({
    enabled: z.boolean(),
    ratio: z.number().min(0).max(1),
    note: z.string().optional(),
  }),
];

/** `tool_3` … `tool_<count>`: name, description and zod input of each filler tool. */
export function fillerTools(count) {
  const tools = [];
  for (let i = 3; i <= count; i++) {
    tools.push({
      name: `tool_${i}`,
      description: `Benchmark filler tool number ${i}.`,
      parameters: fillerSchemas[(i - 3) % fillerSchemas.length],
    });
  }
  return tools;
}

/** PORT, HOST, MCP_SESSIONS and MCP_TOOLS, as every bench server reads them. */
export function serverEnv() {
  const sessions = process.env.MCP_SESSIONS ?? 'stateful';
  const tools = Number(process.env.MCP_TOOLS ?? 5);
  if (sessions !== 'stateful' && sessions !== 'stateless') {
    throw new Error(`MCP_SESSIONS must be "stateful" or "stateless", got "${sessions}".`);
  }
  if (!Number.isInteger(tools) || tools < 2) {
    throw new Error(`MCP_TOOLS must be an integer of at least 2 (echo and progress), got "${process.env.MCP_TOOLS}".`);
  }
  return {
    host: process.env.HOST ?? '127.0.0.1',
    port: Number(process.env.PORT ?? 3000),
    stateful: sessions === 'stateful',
    tools,
  };
}
