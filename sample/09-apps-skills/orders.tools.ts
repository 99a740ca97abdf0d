import { Injectable } from '@nestjs/common';
import { fileURLToPath } from 'node:url';
import { Args, McpApp, Tool, ToolError, appResult } from 'nestjs-model-context';
import { ShipOrderDto } from './dto/ship-order.dto.js';
import { OrdersService, type Order } from './orders.service.js';

const DASHBOARD = 'ui://orders/dashboard';

/** What the dashboard view renders (the tools' structuredContent). */
export interface DashboardData {
  orders: Order[];
  shipped?: string;
}

function summary(orders: Order[]): string {
  const open = orders.filter((order) => order.status === 'open');
  const lines = orders.map((order) => `${order.id} ${order.customer}: ${order.total.toFixed(2)} EUR, ${order.status}`);
  return `${orders.length} orders, ${open.length} open.\n${lines.join('\n')}`;
}

/**
 * An order dashboard as an MCP App: hosts that render MCP Apps show the HTML view next to the
 * result; every other client (and the model) reads the text. The view ships orders through
 * `ship_order`, an app-only tool that plain clients never see.
 */
@Injectable()
export class OrderTools {
  constructor(private readonly orders: OrdersService) {}

  @Tool({
    title: 'Order dashboard',
    description:
      'Show the orders and their status as a dashboard; hosts with MCP Apps render it as an interactive view.',
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  })
  @McpApp({
    view: {
      uri: DASHBOARD,
      title: 'Order dashboard',
      description: 'The orders with a Ship button for each open one',
      // Specs and the sample run from dist/; the view stays in the source tree.
      file: fileURLToPath(new URL('../../../sample/09-apps-skills/views/dashboard.html', import.meta.url)),
      // The view talks to the server only through the host (tools/call), and loads nothing.
      csp: { connectDomains: [], resourceDomains: [] },
      // Its "copy" buttons put an order id on the clipboard.
      permissions: { clipboardWrite: {} },
      prefersBorder: true,
    },
  })
  orderDashboard() {
    const orders = this.orders.list();
    return appResult<DashboardData>({ orders }, summary(orders));
  }

  @Tool({
    title: 'Ship an order',
    description: 'Mark an open order shipped. Called by the order dashboard view.',
    // Shipping again reports the same order shipped: no further change.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  })
  @McpApp({ resourceUri: DASHBOARD, visibility: ['app'] })
  shipOrder(@Args() input: ShipOrderDto) {
    const shipped = this.orders.ship(input.id);
    if (!shipped) throw new ToolError(`No order ${input.id}. Call order_dashboard to see the orders.`);
    const orders = this.orders.list();
    return appResult<DashboardData>(
      { orders, shipped: shipped.id },
      `Order ${shipped.id} is shipped.\n${summary(orders)}`,
    );
  }
}
