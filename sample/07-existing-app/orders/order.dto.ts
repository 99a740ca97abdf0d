import { Exclude, Expose, Type } from 'class-transformer';
import { ArrayMinSize, IsEmail, IsEnum, IsInt, IsNotEmpty, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';

export enum OrderStatus {
  Open = 'open',
  Cancelled = 'cancelled',
}

export enum Priority {
  Normal = 'normal',
  Express = 'express',
}

export class OrderLineDto {
  @IsString()
  @IsNotEmpty()
  sku!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

export class CreateOrderDto {
  @IsEmail()
  customerEmail!: string;

  @ValidateNested({ each: true })
  @Type(() => OrderLineDto)
  @ArrayMinSize(1)
  lines!: OrderLineDto[];

  @IsOptional()
  @IsEnum(Priority)
  priority?: Priority;
}

export class ListOrdersQuery {
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
  pageSize?: number;

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
