import {
  Body,
  ClassSerializerInterceptor,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { AuditInterceptor, BearerAuthGuard, OrderIdPipe } from './audit.js';
import { CreateOrderDto, ListOrdersQuery, type OrderView } from './order.dto.js';
import { OrdersService } from './orders.service.js';

/** An ordinary REST controller: nothing in it knows about MCP. */
@Controller('orders')
@UseGuards(BearerAuthGuard)
@UseInterceptors(AuditInterceptor, ClassSerializerInterceptor)
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** Lists orders, a page at a time. */
  @Get()
  list(@Query() query: ListOrdersQuery) {
    return this.orders.list(query.page ?? 1, query.pageSize ?? 10, query.status);
  }

  @Get(':id')
  get(@Param('id', OrderIdPipe) id: string): OrderView {
    return this.orders.get(id);
  }

  @Post()
  create(@Body() dto: CreateOrderDto, @Req() request: { user?: { id: string } }): OrderView {
    return this.orders.create(dto, request.user?.id ?? 'anonymous');
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id', OrderIdPipe) id: string, @Req() request: { user?: { id: string } }): OrderView {
    return this.orders.cancel(id, request.user?.id ?? 'anonymous');
  }
}
