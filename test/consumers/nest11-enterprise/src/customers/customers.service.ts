import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Like, Repository } from 'typeorm';
import { Customer } from './customer.entity';
import { CreateCustomerDto } from './dto/create-customer.dto';
import { CustomerDto, CustomerPageDto } from './dto/customer.dto';
import { SearchCustomersDto } from './dto/search-customers.dto';

@Injectable()
export class CustomersService {
  constructor(@InjectRepository(Customer) private readonly customers: Repository<Customer>) {}

  async search({ query, status, limit = 20 }: SearchCustomersDto): Promise<CustomerPageDto> {
    const where = query
      ? [{ name: Like(`%${query}%`), ...(status ? { status } : {}) }, { email: Like(`%${query}%`), ...(status ? { status } : {}) }]
      : status
        ? { status }
        : {};
    const [found, total] = await this.customers.findAndCount({ where, order: { id: 'ASC' }, take: limit });
    return { items: found.map((customer) => CustomerDto.from(customer)), total };
  }

  async findOne(id: number): Promise<CustomerDto> {
    const customer = await this.customers.findOneBy({ id });
    if (!customer) {
      throw new NotFoundException(`Customer ${id} not found`);
    }
    return CustomerDto.from(customer);
  }

  async create(dto: CreateCustomerDto): Promise<CustomerDto> {
    if (await this.customers.existsBy({ email: dto.email })) {
      throw new ConflictException(`A customer with e-mail ${dto.email} exists already`);
    }
    const saved = await this.customers.save(this.customers.create({ name: dto.name, email: dto.email, note: dto.note ?? null }));
    return this.findOne(saved.id);
  }

  async remove(id: number): Promise<void> {
    const result = await this.customers.delete({ id });
    if (!result.affected) {
      throw new NotFoundException(`Customer ${id} not found`);
    }
  }
}
