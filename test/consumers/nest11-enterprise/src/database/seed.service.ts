import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Customer, CustomerStatus } from '../customers/customer.entity';
import { Order, OrderStatus } from '../orders/order.entity';

/** Demo data for an empty database. */
@Injectable()
export class SeedService implements OnApplicationBootstrap {
  constructor(private readonly dataSource: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    const customers = this.dataSource.getRepository(Customer);
    if ((await customers.count()) > 0) return;
    const [ada] = await customers.save([
      { name: 'Ada Lovelace', email: 'ada@example.com', status: CustomerStatus.Active, note: 'Prefers e-mail to calls.' },
      { name: 'Charles Babbage', email: 'charles@example.com', status: CustomerStatus.Suspended, note: null },
    ]);
    await this.dataSource.getRepository(Order).save([
      { customerId: ada.id, product: 'Analytical engine manual', quantity: 2, unitPrice: 12.5, status: OrderStatus.Shipped },
      { customerId: ada.id, product: 'Punched cards', quantity: 500, unitPrice: 0.02, status: OrderStatus.Open },
    ]);
  }
}
