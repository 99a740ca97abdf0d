import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { CustomersService } from '../customers/customers.service';
import { CreateOrderDto } from './dto/create-order.dto';
import { ListOrdersQueryDto } from './dto/list-orders.dto';
import { OrderDto } from './dto/order.dto';
import { Order } from './order.entity';

@Injectable()
export class OrdersService {
  constructor(
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly customers: CustomersService,
  ) {}

  async list({ customerId, status }: ListOrdersQueryDto): Promise<OrderDto[]> {
    const found = await this.orders.find({
      where: { ...(customerId ? { customerId } : {}), ...(status ? { status } : {}) },
      relations: { customer: true },
      order: { id: 'ASC' },
    });
    return found.map((order) => OrderDto.from(order));
  }

  async findOne(id: number): Promise<OrderDto> {
    const order = await this.orders.findOne({ where: { id }, relations: { customer: true } });
    if (!order) {
      throw new NotFoundException(`Order ${id} not found`);
    }
    return OrderDto.from(order);
  }

  async create(dto: CreateOrderDto): Promise<OrderDto> {
    await this.customers.findOne(dto.customerId);
    const saved = await this.orders.save(this.orders.create(dto));
    return this.findOne(saved.id);
  }
}
