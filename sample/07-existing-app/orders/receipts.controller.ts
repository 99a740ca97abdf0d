import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { ExposeRoute } from 'nestjs-model-context';
import { BearerAuthGuard } from './audit.js';
import { OrdersService } from './orders.service.js';

/** The one route of the sample decorated in place: the rest is exposed by module options. */
@Controller('receipts')
@UseGuards(BearerAuthGuard)
export class ReceiptsController {
  constructor(private readonly orders: OrdersService) {}

  @Get(':orderId')
  @ExposeRoute({
    name: 'get_receipt',
    title: 'Order receipt',
    description: 'The receipt text of one order, by order id (for example ORD-1).',
    argumentDescriptions: { orderId: 'The order id, for example ORD-1.' },
  })
  receipt(@Param('orderId') orderId: string): { text: string } {
    const order = this.orders.get(orderId);
    const lines = order.lines.map((l) => `${l.quantity} x ${l.sku}`).join(', ');
    return { text: `Receipt ${order.id} for ${order.customerEmail}: ${lines}` };
  }
}
