import { Body, Controller, Get, Injectable, NotFoundException, Param, Post } from '@nestjs/common';
import { Exclude } from 'class-transformer';
import { IsInt, IsOptional, IsString, Length, Min } from 'class-validator';
import { Args, Emit, Tool } from 'nestjs-model-context';
import { of, type Observable } from 'rxjs';
import { Public } from './auth.js';

export class Order {
  id!: string;
  item!: string;
  quantity!: number;
  /** Never leaves the server: ClassSerializerInterceptor strips it from REST answers. */
  @Exclude() internalNote!: string;

  constructor(init: Order) {
    Object.assign(this, init);
  }
}

export class CreateOrderDto {
  @IsString() @Length(1, 100) item!: string;
  @IsInt() @Min(1) quantity!: number;
  @IsOptional() @IsString() note?: string;
}

export class OrderRefDto {
  @IsString() id!: string;
}

@Injectable()
export class OrdersService {
  private readonly orders = new Map<string, Order>([['A1', new Order({ id: 'A1', item: 'widget', quantity: 2, internalNote: 'vip' })]]);

  find(id: string): Order {
    const order = this.orders.get(id);
    if (!order) throw new NotFoundException(`Order ${id} not found`);
    return order;
  }

  create(input: CreateOrderDto): Order {
    const order = new Order({ id: `O${this.orders.size + 1}`, item: input.item, quantity: input.quantity, internalNote: input.note ?? '' });
    this.orders.set(order.id, order);
    return order;
  }
}

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get(':id')
  find(@Param('id') id: string): Order {
    return this.orders.find(id);
  }

  @Post()
  create(@Body() input: CreateOrderDto): Order {
    return this.orders.create(input);
  }
}

@Public()
@Controller('health')
export class HealthController {
  @Get()
  health(): { status: string } {
    return { status: 'up' };
  }
}

@Injectable()
export class OrdersTools {
  constructor(private readonly orders: OrdersService) {}

  @Tool({ description: 'Find an order by id.' })
  getOrder(@Args() { id }: OrderRefDto): { id: string; item: string; quantity: number } {
    const { internalNote: _hidden, ...order } = this.orders.find(id);
    return order;
  }

  @Tool({ description: 'Place an order.' })
  createOrder(@Args() input: CreateOrderDto): string {
    return `Created ${this.orders.create(input).id}`;
  }

  @Tool({ description: 'Pack an order for shipping, reporting each step.' })
  packOrder(@Args() { id }: OrderRefDto): Observable<unknown> {
    const order = this.orders.find(id);
    return of(Emit.progress(1, 2, 'picked'), Emit.progress(2, 2, 'boxed'), `Packed ${order.id}`);
  }
}
