import { Exclude, Expose, Type } from 'class-transformer';
import { SchemaProperty } from 'nestjs-model-context';
import {
  ArrayMinSize,
  IsEmail,
  IsEnum,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

export enum OrderStatus {
  Open = 'open',
  Cancelled = 'cancelled',
}

export enum Priority {
  Normal = 'normal',
  Express = 'express',
}

export class OrderLineDto {
  @SchemaProperty({ description: 'The catalogue article number (SKU) to order, e.g. BOOK-1.' })
  @IsString()
  @IsNotEmpty()
  sku!: string;

  @SchemaProperty({ description: 'How many of the article to order, at least 1.' })
  @IsInt()
  @Min(1)
  quantity!: number;
}

export class CreateOrderDto {
  @SchemaProperty({ description: "The customer's e-mail address; the order is filed under it." })
  @IsEmail()
  customerEmail!: string;

  @SchemaProperty({ description: 'The order lines, one per article: at least one.' })
  @ValidateNested({ each: true })
  @Type(() => OrderLineDto)
  @ArrayMinSize(1)
  lines!: OrderLineDto[];

  @SchemaProperty({ description: 'How fast to ship: normal (the default) or express.', default: 'normal' })
  @IsOptional()
  @IsEnum(Priority)
  priority?: Priority;
}

export class ListOrdersQuery {
  @SchemaProperty({ description: 'The page to return, counting from 1.', default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  page?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(50)
  @SchemaProperty({ description: 'How many orders per page, from 1 to 50.', default: 10 })
  pageSize?: number;

  @SchemaProperty({ description: 'Only orders in this status: open or cancelled. Leave it out for every order.' })
  @IsOptional()
  @IsEnum(OrderStatus)
  status?: OrderStatus;
}

/** What the API returns: the internal note never leaves the server (ClassSerializerInterceptor). */
export class OrderView {
  @Expose() id!: string;
  @Expose() customerEmail!: string;
  @Expose() lines!: OrderLineDto[];
  @Expose() priority!: Priority;
  @Expose() status!: OrderStatus;
  @Exclude() internalNote!: string;

  constructor(fields: Omit<OrderView, never>) {
    Object.assign(this, fields);
  }
}
