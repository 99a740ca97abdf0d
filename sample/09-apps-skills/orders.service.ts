import { Injectable } from '@nestjs/common';

/** One order of the sample's in-memory store. */
export interface Order {
  id: string;
  customer: string;
  total: number;
  status: 'open' | 'shipped';
}

/** The sample's orders, in memory: enough for the dashboard to show and change. */
@Injectable()
export class OrdersService {
  private readonly orders = new Map<string, Order>(
    [
      { id: 'A-1001', customer: 'Ada Lovelace', total: 120.5, status: 'open' },
      { id: 'A-1002', customer: 'Grace Hopper', total: 89.9, status: 'open' },
      { id: 'A-1003', customer: 'Alan Turing', total: 240, status: 'shipped' },
    ].map((order) => [order.id, order as Order]),
  );

  list(): Order[] {
    return [...this.orders.values()].map((order) => ({ ...order }));
  }

  /** Marks an order shipped; undefined when there is no such order. */
  ship(id: string): Order | undefined {
    const order = this.orders.get(id);
    if (!order) return undefined;
    order.status = 'shipped';
    return { ...order };
  }
}
