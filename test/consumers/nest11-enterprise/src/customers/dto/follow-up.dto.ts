import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsString, Length, Min } from 'class-validator';

export class FollowUpArgsDto {
  @ApiProperty({ description: 'The customer to write to' })
  @IsInt()
  @Min(1)
  customerId: number;

  @ApiProperty({ description: 'What the e-mail is about' })
  @IsString()
  @Length(1, 200)
  topic: string;
}
