import { Injectable, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { IsNumber, IsPositive, IsString, Length } from 'class-validator';
import { Args, Ctx, McpContext, RequireScopes, SchemaProperty, Tool } from 'nestjs-model-context';
import { Roles, RolesGuard } from './guards.js';
import { AuditService, CallLoggingInterceptor, QuotaExceededError, QuotaFilter } from './support.js';

export class CreateInvoiceDto {
  @SchemaProperty({ description: 'Who the invoice is addressed to.' })
  @IsString()
  @Length(1, 80)
  customer!: string;

  @SchemaProperty({ description: 'The amount due, in euros (at most 10000).' })
  @IsNumber()
  @IsPositive()
  amount!: number;
}

@Injectable()
@UseGuards(RolesGuard)
@UseInterceptors(CallLoggingInterceptor)
export class InvoiceTools {
  private count = 0;

  constructor(private readonly audit: AuditService) {}

  @Tool({ title: 'List invoices', description: 'List invoices (read scope).', annotations: { readOnlyHint: true } })
  @RequireScopes('invoices:read')
  listInvoices(@Ctx() ctx: McpContext): string {
    return `${this.count} invoice(s); you are ${ctx.principal}.`;
  }

  @Tool({
    title: 'Create an invoice',
    description: 'Create an invoice (write scope).',
    annotations: { destructiveHint: false },
  })
  @RequireScopes('invoices:write')
  @UseFilters(QuotaFilter)
  createInvoice(@Args() { customer, amount }: CreateInvoiceDto): string {
    if (amount > 10_000) throw new QuotaExceededError(`${amount} is over the 10000 limit`);
    this.count++;
    return this.audit.record(`created invoice for ${customer} (${amount})`);
  }

  @Tool({
    title: 'Wipe invoices',
    description: 'Wipe all invoices (admins only).',
    annotations: { destructiveHint: true },
  })
  @Roles('admin')
  wipeInvoices(): string {
    this.count = 0;
    return this.audit.record('wiped invoices');
  }
}
