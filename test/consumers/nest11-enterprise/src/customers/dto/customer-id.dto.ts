import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Min } from 'class-validator';

export class CustomerIdDto {
  @ApiProperty({ description: 'The customer id', example: 1 })
  @IsInt()
  @Min(1)
  id: number;
}
