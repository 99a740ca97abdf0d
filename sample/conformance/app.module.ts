import { Module } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { ConformancePrompts } from './conformance.prompts.js';
import { ConformanceResources } from './conformance.resources.js';
import { ConformanceSkills } from './conformance.skills.js';
import { ConformanceTools } from './conformance.tools.js';
import { ConformanceTaskTools } from './tasks.tools.js';

/**
 * The fixture the official MCP conformance suite runs against: every tool, resource and prompt
 * its scenarios call, for both protocol eras, on one endpoint (`/mcp`). Legacy clients get
 * stateful sessions (the suite checks session ids, DELETE and resumable streams).
 */
@Module({
  imports: [
    McpModule.forRoot({
      name: 'conformance-fixture',
      version: '1.0.0',
      title: 'MCP conformance fixture',
      instructions: 'Test fixture for the official MCP conformance suite. Every tool exists to be called by it.',
      sessions: { mode: 'stateful' },
      // Two processes started with the same REDIS_URL on two ports behave as one server.
      redis: process.env.REDIS_URL ? { url: process.env.REDIS_URL } : undefined,
    }),
  ],
  providers: [ConformanceTools, ConformanceResources, ConformancePrompts, ConformanceSkills, ConformanceTaskTools],
})
export class AppModule {}
