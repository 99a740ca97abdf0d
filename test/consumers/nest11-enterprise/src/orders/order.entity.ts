import { Column, CreateDateColumn, Entity, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { Customer } from '../customers/customer.entity';

export enum OrderStatus {
  Open = 'open',
  Shipped = 'shipped',
  Cancelled = 'cancelled',
}

@Entity()
export class Order {
  @PrimaryGeneratedColumn()
  id: number;

  @Column()
  customerId: number;

  @ManyToOne(() => Customer, (customer) => customer.orders, { onDelete: 'CASCADE' })
  customer: Customer;

  @Column()
  product: string;

  @Column('int')
  quantity: number;

  @Column('real')
  unitPrice: number;

  @Column({ type: 'simple-enum', enum: OrderStatus, default: OrderStatus.Open })
  status: OrderStatus;

  @CreateDateColumn()
  createdAt: Date;
}
