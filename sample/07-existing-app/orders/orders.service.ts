import { Injectable, NotFoundException } from '@nestjs/common';
import { OrderStatus, OrderView, Priority, type CreateOrderDto } from './order.dto.js';

@Injectable()
export class OrdersService {
  private readonly orders = new Map<string, OrderView>();
  private next = 1;

  constructor() {
    this.create({ customerEmail: 'ada@example.com', lines: [{ sku: 'BOOK-1', quantity: 2 }] }, 'seed');
  }

  create(dto: CreateOrderDto, by: string): OrderView {
    const id = `ORD-${this.next++}`;
    const order = new OrderView({
      id,
      customerEmail: dto.customerEmail,
      lines: dto.lines.map((l) => ({ sku: l.sku, quantity: l.quantity })),
      priority: dto.priority ?? Priority.Normal,
      status: OrderStatus.Open,
      internalNote: `created by ${by}`,
    });
    this.orders.set(id, order);
    return order;
  }

  list(
    page: number,
    pageSize: number,
    status?: OrderStatus,
  ): { items: OrderView[]; page: number; pageSize: number; total: number } {
    const all = [...this.orders.values()].filter((o) => !status || o.status === status);
    return { items: all.slice((page - 1) * pageSize, page * pageSize), page, pageSize, total: all.length };
  }

  get(id: string): OrderView {
    const order = this.orders.get(id);
    if (!order) throw new NotFoundException(`Order ${id} not found.`);
    return order;
  }

  cancel(id: string, by: string): OrderView {
    const order = this.get(id);
    order.status = OrderStatus.Cancelled;
    order.internalNote = `cancelled by ${by}`;
    return order;
  }

  stats(): Record<OrderStatus, number> {
    const counts = { [OrderStatus.Open]: 0, [OrderStatus.Cancelled]: 0 };
    for (const order of this.orders.values()) counts[order.status]++;
    return counts;
  }
}
