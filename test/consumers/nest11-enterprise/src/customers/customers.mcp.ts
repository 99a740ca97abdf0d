import { Injectable, NotFoundException } from '@nestjs/common';
import { Args, Prompt, PromptMessage, RequireScopes, ResourceTemplate, Tool, ToolSets } from 'nestjs-model-context';
import { Role, Roles } from '../auth/roles.decorator';
import { CustomersService } from './customers.service';
import { CreateCustomerDto } from './dto/create-customer.dto';
import { CustomerIdDto } from './dto/customer-id.dto';
import { CustomerDto, CustomerPageDto } from './dto/customer.dto';
import { FollowUpArgsDto } from './dto/follow-up.dto';
import { SearchCustomersDto } from './dto/search-customers.dto';

/** The customers feature as MCP tools, a resource template and a prompt, over the same service. */
@ToolSets('customers')
@Injectable()
export class CustomersMcp {
  constructor(private readonly customers: CustomersService) {}

  @Tool({ title: 'Get customer', description: 'One customer by id, with status and the account manager\'s note.', output: CustomerDto, annotations: { readOnlyHint: true } })
  @RequireScopes('customers:read')
  getCustomer(@Args() { id }: CustomerIdDto): Promise<CustomerDto> {
    return this.customers.findOne(id);
  }

  @Tool({ title: 'Search customers', description: 'Customers whose name or e-mail contains the query, oldest first, a page at a time.', output: CustomerPageDto, annotations: { readOnlyHint: true } })
  @RequireScopes('customers:read')
  searchCustomers(@Args() query: SearchCustomersDto): Promise<CustomerPageDto> {
    return this.customers.search(query);
  }

  @Tool({ title: 'Create customer', description: 'Create a customer; the e-mail must be new.', output: CustomerDto })
  @RequireScopes('customers:write')
  createCustomer(@Args() dto: CreateCustomerDto): Promise<CustomerDto> {
    return this.customers.create(dto);
  }

  @Tool({ title: 'Delete customer', description: 'Delete a customer and their orders. Admins only.', annotations: { destructiveHint: true, idempotentHint: true } })
  @Roles(Role.Admin)
  @RequireScopes('customers:write')
  async deleteCustomer(@Args() { id }: CustomerIdDto): Promise<string> {
    await this.customers.remove(id);
    return `Customer ${id} deleted.`;
  }

  @ResourceTemplate({ uriTemplate: 'crm://customers/{id}', name: 'customer', title: 'Customer record', mimeType: 'application/json', description: 'One customer as JSON.' })
  @RequireScopes('customers:read')
  async customerRecord(@Args() { id }: CustomerIdDto): Promise<CustomerDto | undefined> {
    try {
      return await this.customers.findOne(id);
    } catch (error) {
      if (error instanceof NotFoundException) return undefined;
      throw error;
    }
  }

  @Prompt({ title: 'Follow-up e-mail', description: 'Draft a follow-up e-mail to a customer about a topic.' })
  @RequireScopes('customers:read')
  async followUpEmail(@Args() { customerId, topic }: FollowUpArgsDto) {
    const customer = await this.customers.findOne(customerId);
    return [
      PromptMessage.user(`Draft a short, friendly follow-up e-mail to ${customer.name} <${customer.email}> about: ${topic}.`),
      PromptMessage.user(customer.note ? `Their account manager noted: ${customer.note}` : 'There is no note on this customer.'),
    ];
  }
}
