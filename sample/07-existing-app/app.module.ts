import { Module, UseGuards, ValidationPipe } from '@nestjs/common';
import { APP_PIPE } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { McpModule } from 'nestjs-model-context';
import type { McpExposeOptions } from 'nestjs-model-context/options';
import { AuditInterceptor, AuditLog, BearerAuthGuard, OrderIdPipe } from './orders/audit.js';
import {
  GetOrderStatsHandler,
  GetOrderStatsQuery,
  PlaceOrderCommand,
  PlaceOrderHandler,
  PlaceOrderInput,
} from './orders/cqrs.js';
import { OrdersController } from './orders/orders.controller.js';
import { OrdersService } from './orders/orders.service.js';
import { ReceiptsController } from './orders/receipts.controller.js';

/** The existing application, exactly as it runs without MCP. */
@Module({
  imports: [CqrsModule.forRoot()],
  controllers: [OrdersController, ReceiptsController],
  providers: [
    OrdersService,
    AuditLog,
    BearerAuthGuard,
    AuditInterceptor,
    OrderIdPipe,
    PlaceOrderHandler,
    GetOrderStatsHandler,
    {
      provide: APP_PIPE,
      useValue: new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
    },
  ],
})
export class OrdersAppModule {}

/** What MCP adds: options only, not a line changed in the controllers or handlers. */
export const exposeOptions: McpExposeOptions = {
  routes: [
    {
      controllers: [OrdersController],
      tools: {
        list: {
          name: 'list_orders',
          title: 'List orders',
          description: 'Lists orders a page at a time (page from 1, pageSize up to 50), optionally by status.',
        },
        get: {
          name: 'get_order',
          title: 'Get an order',
          description: 'One order by id (for example ORD-1).',
          argumentDescriptions: { id: 'The order id, for example ORD-1 (case does not matter).' },
        },
        // POST implies nothing about effects: these say what the verb cannot.
        create: {
          name: 'create_order',
          title: 'Create an order',
          description: 'Creates an order for a customer e-mail with one or more lines.',
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        },
        'POST /orders/:id/cancel': {
          name: 'cancel_order',
          title: 'Cancel an order',
          description: 'Cancels an order by id.',
          annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
          argumentDescriptions: { id: 'The id of the order to cancel, for example ORD-1 (case does not matter).' },
        },
      },
    },
  ],
  // The buses run no guards: each message names the app's own guard, which authenticates the MCP
  // caller with the same bearer token as the REST API (the module refuses a message left unprotected).
  commands: [
    {
      message: PlaceOrderCommand,
      decorators: [UseGuards(BearerAuthGuard)],
      // The model sends the input; who places the order comes from the user the guard authenticated.
      input: PlaceOrderInput,
      create: (input: PlaceOrderInput, { request }) =>
        new PlaceOrderCommand(input.customerEmail, input.sku, input.quantity, request.user.id),
      name: 'place_order',
      title: 'Place an order',
      description: 'Places a one-line order through the CommandBus.',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
  ],
  queries: [
    {
      message: GetOrderStatsQuery,
      decorators: [UseGuards(BearerAuthGuard)],
      name: 'order_stats',
      title: 'Order statistics',
      description: 'Counts orders by status through the QueryBus.',
    },
  ],
};

@Module({
  imports: [OrdersAppModule, McpModule.forRoot({ name: 'orders', version: '1.0.0', expose: exposeOptions })],
})
export class AppModule {}
