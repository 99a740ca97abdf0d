import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class LoginDto {
  @ApiProperty({ example: 'alice' })
  @IsString()
  @Length(1, 50)
  username: string;

  @ApiProperty({ example: 'alice-password' })
  @IsString()
  @Length(1, 100)
  password: string;
}
