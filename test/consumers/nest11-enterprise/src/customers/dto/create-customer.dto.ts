import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, Length } from 'class-validator';

export class CreateCustomerDto {
  @ApiProperty({ description: 'Full name', example: 'Grace Hopper' })
  @IsString()
  @Length(1, 100)
  name: string;

  @ApiProperty({ description: 'Unique e-mail address', example: 'grace@example.com' })
  @IsEmail()
  email: string;

  @ApiPropertyOptional({ description: 'A note for the account manager' })
  @IsOptional()
  @IsString()
  @Length(0, 500)
  note?: string;
}
