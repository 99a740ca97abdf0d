import { Body, Controller, Get, Param, ParseIntPipe, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreateOrderDto } from './dto/create-order.dto';
import { ListOrdersQueryDto } from './dto/list-orders.dto';
import { OrderDto } from './dto/order.dto';
import { OrdersService } from './orders.service';

@ApiTags('orders')
@ApiBearerAuth()
@Controller({ path: 'orders', version: '1' })
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get()
  @ApiOperation({ summary: 'List orders', description: 'Orders, oldest first, optionally of one customer or in one status.' })
  @ApiOkResponse({ type: OrderDto, isArray: true })
  findAll(@Query() query: ListOrdersQueryDto): Promise<OrderDto[]> {
    return this.orders.list(query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One order', description: 'One order by id, with its customer.' })
  @ApiOkResponse({ type: OrderDto })
  @ApiNotFoundResponse()
  findOne(@Param('id', ParseIntPipe) id: number): Promise<OrderDto> {
    return this.orders.findOne(id);
  }

  @Post()
  @ApiOperation({ summary: 'Place an order', description: 'Place an order for a customer.' })
  @ApiCreatedResponse({ type: OrderDto })
  create(@Body() dto: CreateOrderDto): Promise<OrderDto> {
    return this.orders.create(dto);
  }
}
