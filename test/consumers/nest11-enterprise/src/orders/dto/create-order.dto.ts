import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsPositive, IsString, Length, Min } from 'class-validator';

export class CreateOrderDto {
  @ApiProperty({ description: 'Who orders' })
  @IsInt()
  @Min(1)
  customerId: number;

  @ApiProperty({ example: 'Widget' })
  @IsString()
  @Length(1, 100)
  product: string;

  @ApiProperty({ minimum: 1 })
  @IsInt()
  @Min(1)
  quantity: number;

  @ApiProperty({ description: 'Price of one item' })
  @IsPositive()
  unitPrice: number;
}
