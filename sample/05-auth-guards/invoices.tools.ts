import { Injectable, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { IsNumber, IsPositive, IsString, Length } from 'class-validator';
import { Args, Ctx, McpContext, RequireScopes, Tool } from 'nestjs-model-context';
import { Roles, RolesGuard } from './guards.js';
import { AuditService, CallLoggingInterceptor, QuotaExceededError, QuotaFilter } from './support.js';

export class CreateInvoiceDto {
  @IsString()
  @Length(1, 80)
  customer!: string;

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

  @Tool({ description: 'List invoices (read scope).', annotations: { readOnlyHint: true } })
  @RequireScopes('invoices:read')
  listInvoices(@Ctx() ctx: McpContext): string {
    return `${this.count} invoice(s); you are ${ctx.principal}.`;
  }

  @Tool({ description: 'Create an invoice (write scope).' })
  @RequireScopes('invoices:write')
  @UseFilters(QuotaFilter)
  createInvoice(@Args() { customer, amount }: CreateInvoiceDto): string {
    if (amount > 10_000) throw new QuotaExceededError(`${amount} is over the 10000 limit`);
    this.count++;
    return this.audit.record(`created invoice for ${customer} (${amount})`);
  }

  @Tool({ description: 'Wipe all invoices (admins only).', annotations: { destructiveHint: true } })
  @Roles('admin')
  wipeInvoices(): string {
    this.count = 0;
    return this.audit.record('wiped invoices');
  }
}
