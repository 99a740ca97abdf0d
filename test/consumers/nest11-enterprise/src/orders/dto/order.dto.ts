import { ApiProperty } from '@nestjs/swagger';
import { Order, OrderStatus } from '../order.entity';

export class CustomerSummaryDto {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty()
  name: string;
}

/** What the API answers for an order. */
export class OrderDto {
  @ApiProperty({ type: 'integer', example: 1 })
  id: number;

  @ApiProperty({ type: () => CustomerSummaryDto })
  customer: CustomerSummaryDto;

  @ApiProperty({ example: 'Widget' })
  product: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  quantity: number;

  @ApiProperty({ description: 'quantity × unit price' })
  total: number;

  @ApiProperty({ enum: OrderStatus, enumName: 'OrderStatus' })
  status: OrderStatus;

  @ApiProperty()
  createdAt: Date;

  static from(order: Order): OrderDto {
    return {
      id: order.id,
      customer: { id: order.customer.id, name: order.customer.name },
      product: order.product,
      quantity: order.quantity,
      total: order.quantity * order.unitPrice,
      status: order.status,
      createdAt: order.createdAt,
    };
  }
}
