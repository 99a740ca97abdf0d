import { ApiProperty } from '@nestjs/swagger';
import { Customer, CustomerStatus } from '../customer.entity';

/** What the API answers for a customer. */
export class CustomerDto {
  @ApiProperty({ type: 'integer', example: 1 })
  id: number;

  @ApiProperty({ example: 'Ada Lovelace' })
  name: string;

  @ApiProperty({ format: 'email', example: 'ada@example.com' })
  email: string;

  @ApiProperty({ enum: CustomerStatus, enumName: 'CustomerStatus' })
  status: CustomerStatus;

  @ApiProperty({ type: String, nullable: true, description: 'What the account manager noted' })
  note: string | null;

  @ApiProperty()
  createdAt: Date;

  static from(customer: Customer): CustomerDto {
    const { id, name, email, status, note, createdAt } = customer;
    return { id, name, email, status, note, createdAt };
  }
}

export class CustomerPageDto {
  @ApiProperty({ type: () => [CustomerDto] })
  items: CustomerDto[];

  @ApiProperty({ type: 'integer', description: 'How many customers match, over every page' })
  total: number;
}
