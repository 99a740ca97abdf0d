import { Controller, Get, Injectable, Module, Res } from '@nestjs/common';
import type { Response } from 'express';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { Args, Ctx, McpContext, McpHeader, McpModule, McpRegistry, SchemaProperty, Tool } from 'nestjs-model-context';
import { McpHealthIndicator } from 'nestjs-model-context/telemetry';

/** Names this process in answers, so you can watch the balancer alternate. */
export const INSTANCE = process.env.INSTANCE ?? `pid ${process.pid}`;

export class ForecastDto {
  /** Mirrored into the Mcp-Param-Region header: a gateway can route on it without reading bodies. */
  @McpHeader('Region')
  @SchemaProperty({ description: 'The region to forecast: eu (Europe), us (United States) or ap (Asia-Pacific).' })
  @IsIn(['eu', 'us', 'ap'])
  region!: string;

  @SchemaProperty({ description: 'How many days ahead to forecast, from 1 to 7.', default: 3 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(7)
  days?: number;
}

@Injectable()
export class ClusterTools {
  private added = 0;

  constructor(private readonly registry: McpRegistry) {}

  @Tool({
    title: 'Which instance answered',
    description:
      'Says which instance answered this call: call it twice through the balancer to see the instances alternate.',
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  })
  whoami(): string {
    return `answered by ${INSTANCE}`;
  }

  @Tool({
    title: 'Weather forecast',
    description:
      'A made-up weather forecast for a region, naming the instance that answered (no real weather service is called).',
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  })
  forecast(@Args() { region, days = 3 }: ForecastDto): string {
    return `${days}-day forecast for ${region}: sunny (from ${INSTANCE})`;
  }

  @Tool({
    title: 'Register a demo tool',
    description:
      'Registers a new demo tool on this instance; every session on every instance hears tools/list_changed.',
    // Each call adds one more tool; nothing is removed or overwritten.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  })
  announce(): string {
    const name = `added_${++this.added}_${process.pid}`;
    this.registry.addTool({
      name,
      description: `Added at runtime by ${INSTANCE}.`,
      handler: () => `hello from ${name}`,
    });
    return `registered ${name} on ${INSTANCE}`;
  }

  @Tool({
    title: 'Ask the user to confirm',
    description:
      'Asks the user a yes/no question through elicitation and reports the answer; the answer may reach any instance.',
    // It only asks: nothing on the server changes whatever the answer.
    annotations: { readOnlyHint: true, openWorldHint: false },
  })
  async confirm(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Go ahead?', {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    return outcome.action === 'accept'
      ? `${INSTANCE} was told ok=${(outcome.content as { ok: boolean }).ok}`
      : `${INSTANCE} was told ${outcome.action}`;
  }
}

/** A readiness probe for the balancer (or @nestjs/terminus: `() => mcpHealth.isHealthy('mcp')`). */
@Controller('health')
export class HealthController {
  constructor(private readonly mcpHealth: McpHealthIndicator) {}

  @Get('ready')
  async ready(@Res() res: Response): Promise<void> {
    const result = await this.mcpHealth.isHealthy('mcp');
    res.status(result.mcp.status === 'up' ? 200 : 503).json({ instance: INSTANCE, ...result });
  }
}

const redisUrl = process.env.REDIS_URL;

@Module({
  imports: [
    McpModule.forRoot({
      name: 'scale-out',
      version: '1.0.0',
      // With REDIS_URL every process started with it serves the same sessions; without it this is
      // an ordinary single instance with state in memory.
      redis: redisUrl ? { url: redisUrl } : undefined,
    }),
  ],
  controllers: [HealthController],
  providers: [ClusterTools],
})
export class AppModule {}
