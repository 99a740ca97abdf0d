import { CommandHandler, QueryHandler, type ICommandHandler, type IQueryHandler } from '@nestjs/cqrs';
import { IsEmail, IsEnum, IsInt, IsNotEmpty, IsOptional, IsString, Min } from 'class-validator';
import { SchemaProperty } from 'nestjs-model-context';
import { AuditLog } from './audit.js';
import { OrderStatus } from './order.dto.js';
import { OrdersService } from './orders.service.js';

/** Places a one-line order (the command side of the app), written the Nest way: constructor parameters. */
export class PlaceOrderCommand {
  constructor(
    readonly customerEmail: string,
    readonly sku: string,
    readonly quantity: number,
    /** Who placed it: the authenticated user, never a value a client chose. */
    readonly placedBy: string,
  ) {}
}

/** What a client sends to place an order: the command's input, validated before it is built. */
export class PlaceOrderInput {
  @SchemaProperty({ description: "The customer's e-mail address; the order is filed under it." })
  @IsEmail()
  customerEmail!: string;

  @IsString()
  @IsNotEmpty()
  @SchemaProperty({ description: 'The catalogue article number (SKU) to order, e.g. BOOK-1.' })
  sku!: string;

  @IsInt()
  @Min(1)
  @SchemaProperty({ description: 'How many of the article to order, at least 1.' })
  quantity!: number;
}

/** How many orders are in each status (the query side). */
export class GetOrderStatsQuery {
  @SchemaProperty({ description: 'Count only this status (open or cancelled). Leave it out to count every status.' })
  @IsOptional()
  @IsEnum(OrderStatus)
  status?: OrderStatus;
}

@CommandHandler(PlaceOrderCommand)
export class PlaceOrderHandler implements ICommandHandler<PlaceOrderCommand> {
  constructor(
    private readonly orders: OrdersService,
    private readonly audit: AuditLog,
  ) {}

  async execute(command: PlaceOrderCommand): Promise<{ id: string }> {
    this.audit.record(`command ${command.constructor.name} ${command.sku}`);
    const order = this.orders.create(
      { customerEmail: command.customerEmail, lines: [{ sku: command.sku, quantity: command.quantity }] },
      command.placedBy,
    );
    return { id: order.id };
  }
}

@QueryHandler(GetOrderStatsQuery)
export class GetOrderStatsHandler implements IQueryHandler<GetOrderStatsQuery> {
  constructor(
    private readonly orders: OrdersService,
    private readonly audit: AuditLog,
  ) {}

  async execute(query: GetOrderStatsQuery): Promise<Record<string, number>> {
    this.audit.record(`query ${query.constructor.name}`);
    const stats = this.orders.stats();
    return query.status ? { [query.status]: stats[query.status] } : stats;
  }
}
