import { Module } from '@nestjs/common';
import { fileURLToPath } from 'node:url';
import { McpModule } from 'nestjs-model-context';
import { OrdersService } from './orders.service.js';
import { OrderTools } from './orders.tools.js';

/**
 * MCP Apps and Skills: an order dashboard view with an app-only tool, and two skills (SEP-2640)
 * that tell an agent how to use the sample's tools.
 */
@Module({
  imports: [
    McpModule.forRoot({
      name: 'orders',
      version: '1.0.0',
      instructions:
        'Order desk. Load skill://order-dashboard/SKILL.md before showing orders, skill://order-shipping/SKILL.md before shipping.',
      skills: { directory: fileURLToPath(new URL('../../../sample/09-apps-skills/skills/', import.meta.url)) },
    }),
  ],
  providers: [OrdersService, OrderTools],
})
export class AppModule {}
