/**
 * A 300-tool enterprise catalog (the sample's, and the token bench's: `npm run bench:tokens`):
 * 20 business domains (each a tool set) × 15 operations, every tool with a description and
 * a class-validator DTO whose properties carry descriptions, as a large Nest backend exposes them.
 * The DTO classes are built from tables rather than written out 300 times; the library sees real
 * decorated classes either way.
 */
import { Injectable, type OnApplicationBootstrap, type Type } from '@nestjs/common';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDateString,
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { McpRegistry, SchemaProperty } from 'nestjs-model-context';
import type { McpToolSetsOptions } from 'nestjs-model-context/options';

type FieldType = 'string' | 'text' | 'int' | 'money' | 'bool' | 'date' | 'email' | 'url' | 'enum' | 'ids';

interface Field {
  name: string;
  type: FieldType;
  description: string;
  optional?: boolean;
  values?: readonly string[];
}

interface Domain {
  set: string;
  title: string;
  description: string;
  entity: string;
  plural: string;
  /** How the entity is named in prose ("invoice", "purchase order"). */
  noun: string;
  statuses: readonly string[];
  fields: readonly Field[];
}

const f = (name: string, type: FieldType, description: string, extra: Partial<Field> = {}): Field => ({
  name,
  type,
  description,
  ...extra,
});

export const DOMAINS: readonly Domain[] = [
  {
    set: 'billing',
    title: 'Billing',
    description: 'Invoices, credit notes and payment collection.',
    entity: 'invoice',
    plural: 'invoices',
    noun: 'invoice',
    statuses: ['draft', 'sent', 'paid', 'overdue', 'void'],
    fields: [
      f('customerId', 'string', 'The customer the invoice is billed to.'),
      f('currency', 'enum', 'ISO 4217 currency of every amount.', { values: ['EUR', 'USD', 'GBP', 'CHF'] }),
      f('amountCents', 'money', 'Total amount in the smallest currency unit.'),
      f('dueDate', 'date', 'The day payment is due (YYYY-MM-DD).'),
      f('poNumber', 'string', "The customer's purchase order reference, printed on the invoice.", { optional: true }),
    ],
  },
  {
    set: 'crm',
    title: 'CRM',
    description: 'Contacts, accounts and their interactions.',
    entity: 'contact',
    plural: 'contacts',
    noun: 'contact',
    statuses: ['lead', 'prospect', 'customer', 'churned'],
    fields: [
      f('fullName', 'string', 'First and last name.'),
      f('email', 'email', 'Primary email address.'),
      f('accountId', 'string', 'The company account this contact belongs to.', { optional: true }),
      f('phone', 'string', 'Phone number in E.164 form.', { optional: true }),
      f('marketingOptIn', 'bool', 'Whether the contact agreed to marketing email.', { optional: true }),
    ],
  },
  {
    set: 'hr',
    title: 'Human resources',
    description: 'Employees, positions and time off.',
    entity: 'employee',
    plural: 'employees',
    noun: 'employee',
    statuses: ['onboarding', 'active', 'on_leave', 'terminated'],
    fields: [
      f('fullName', 'string', 'Legal name of the employee.'),
      f('workEmail', 'email', 'Company email address.'),
      f('departmentId', 'string', 'The department the employee reports into.'),
      f('startDate', 'date', 'First working day.'),
      f('managerId', 'string', 'Employee id of the line manager.', { optional: true }),
    ],
  },
  {
    set: 'inventory',
    title: 'Inventory',
    description: 'Stock items, quantities and reorder points.',
    entity: 'stock_item',
    plural: 'stock_items',
    noun: 'stock item',
    statuses: ['in_stock', 'low', 'out_of_stock', 'discontinued'],
    fields: [
      f('sku', 'string', 'Stock keeping unit code.'),
      f('description', 'text', 'What the item is, as shown on pick lists.'),
      f('quantity', 'int', 'Units on hand across all warehouses.'),
      f('reorderPoint', 'int', 'Quantity at which a purchase order is suggested.', { optional: true }),
      f('unitCostCents', 'money', 'Purchase cost of one unit.', { optional: true }),
    ],
  },
  {
    set: 'shipping',
    title: 'Shipping',
    description: 'Shipments, carriers and tracking.',
    entity: 'shipment',
    plural: 'shipments',
    noun: 'shipment',
    statuses: ['label_created', 'in_transit', 'delivered', 'returned', 'lost'],
    fields: [
      f('orderId', 'string', 'The sales order being shipped.'),
      f('carrier', 'enum', 'Carrier that moves the parcel.', { values: ['dhl', 'ups', 'fedex', 'postnl'] }),
      f('weightGrams', 'int', 'Parcel weight in grams.'),
      f('destinationCountry', 'string', 'ISO 3166-1 alpha-2 country code.'),
      f('insured', 'bool', 'Whether declared value insurance is bought.', { optional: true }),
    ],
  },
  {
    set: 'support',
    title: 'Support',
    description: 'Customer tickets, SLAs and escalations.',
    entity: 'ticket',
    plural: 'tickets',
    noun: 'support ticket',
    statuses: ['new', 'open', 'pending', 'solved', 'closed'],
    fields: [
      f('subject', 'string', 'One-line summary of the problem.'),
      f('body', 'text', "The customer's description of the problem."),
      f('priority', 'enum', 'How urgent the ticket is.', { values: ['low', 'normal', 'high', 'urgent'] }),
      f('requesterEmail', 'email', 'Who reported it.'),
      f('productArea', 'string', 'Product area the problem concerns.', { optional: true }),
    ],
  },
  {
    set: 'marketing',
    title: 'Marketing',
    description: 'Campaigns, audiences and email sends.',
    entity: 'campaign',
    plural: 'campaigns',
    noun: 'marketing campaign',
    statuses: ['planned', 'running', 'paused', 'finished'],
    fields: [
      f('name', 'string', 'Internal campaign name.'),
      f('channel', 'enum', 'Where the campaign runs.', { values: ['email', 'social', 'search', 'display'] }),
      f('budgetCents', 'money', 'Total budget.'),
      f('startDate', 'date', 'Launch day.'),
      f('landingPageUrl', 'url', 'Page the campaign links to.', { optional: true }),
    ],
  },
  {
    set: 'analytics',
    title: 'Analytics',
    description: 'Dashboards, metrics and scheduled reports.',
    entity: 'dashboard',
    plural: 'dashboards',
    noun: 'analytics dashboard',
    statuses: ['draft', 'published', 'archived'],
    fields: [
      f('title', 'string', 'Dashboard title.'),
      f('metricIds', 'ids', 'Metrics shown as widgets, in order.'),
      f('refreshMinutes', 'int', 'How often the widgets refresh.', { optional: true }),
      f('shared', 'bool', 'Whether everyone in the workspace can open it.', { optional: true }),
    ],
  },
  {
    set: 'finance',
    title: 'Finance',
    description: 'General ledger, journals and period close.',
    entity: 'ledger_entry',
    plural: 'ledger_entries',
    noun: 'ledger entry',
    statuses: ['pending', 'posted', 'reversed'],
    fields: [
      f('accountCode', 'string', 'Chart of accounts code debited or credited.'),
      f('amountCents', 'money', 'Signed amount: positive debit, negative credit.'),
      f('postingDate', 'date', 'Accounting date of the entry.'),
      f('memo', 'text', 'Why the entry was made.', { optional: true }),
      f('costCenter', 'string', 'Cost center charged.', { optional: true }),
    ],
  },
  {
    set: 'procurement',
    title: 'Procurement',
    description: 'Purchase orders, suppliers and approvals.',
    entity: 'purchase_order',
    plural: 'purchase_orders',
    noun: 'purchase order',
    statuses: ['draft', 'submitted', 'approved', 'received', 'cancelled'],
    fields: [
      f('supplierId', 'string', 'Supplier the order goes to.'),
      f('lineSkus', 'ids', 'SKUs ordered, one per line.'),
      f('totalCents', 'money', 'Order total.'),
      f('deliveryDate', 'date', 'Requested delivery day.'),
      f('urgent', 'bool', 'Whether expedited shipping is requested.', { optional: true }),
    ],
  },
  {
    set: 'legal',
    title: 'Legal',
    description: 'Contracts, clauses and renewals.',
    entity: 'contract',
    plural: 'contracts',
    noun: 'contract',
    statuses: ['drafting', 'in_review', 'signed', 'expired', 'terminated'],
    fields: [
      f('counterparty', 'string', 'The other party to the contract.'),
      f('contractType', 'enum', 'Kind of agreement.', { values: ['nda', 'msa', 'dpa', 'sow', 'lease'] }),
      f('effectiveDate', 'date', 'Day the contract takes effect.'),
      f('renewalDate', 'date', 'Day it renews or expires.', { optional: true }),
      f('valueCents', 'money', 'Total contract value.', { optional: true }),
    ],
  },
  {
    set: 'it',
    title: 'IT',
    description: 'Devices, licences and access requests.',
    entity: 'device',
    plural: 'devices',
    noun: 'managed device',
    statuses: ['in_storage', 'assigned', 'in_repair', 'retired'],
    fields: [
      f('serialNumber', 'string', 'Manufacturer serial number.'),
      f('model', 'string', 'Make and model.'),
      f('assigneeEmail', 'email', 'Employee the device is issued to.', { optional: true }),
      f('purchaseDate', 'date', 'Day it was bought.'),
      f('encrypted', 'bool', 'Whether full-disk encryption is on.', { optional: true }),
    ],
  },
  {
    set: 'security',
    title: 'Security',
    description: 'Incidents, alerts and response playbooks.',
    entity: 'incident',
    plural: 'incidents',
    noun: 'security incident',
    statuses: ['triage', 'investigating', 'contained', 'resolved'],
    fields: [
      f('title', 'string', 'Short incident title.'),
      f('severity', 'enum', 'Severity per the response policy.', { values: ['sev1', 'sev2', 'sev3', 'sev4'] }),
      f('detectedAt', 'date', 'When it was detected.'),
      f('affectedSystems', 'ids', 'Systems involved.'),
      f('summary', 'text', 'What is known so far.', { optional: true }),
    ],
  },
  {
    set: 'projects',
    title: 'Projects',
    description: 'Projects, milestones and tasks.',
    entity: 'project',
    plural: 'projects',
    noun: 'project',
    statuses: ['proposed', 'active', 'on_hold', 'done'],
    fields: [
      f('name', 'string', 'Project name.'),
      f('ownerId', 'string', 'Employee accountable for delivery.'),
      f('dueDate', 'date', 'Target completion day.'),
      f('budgetCents', 'money', 'Approved budget.', { optional: true }),
      f('tags', 'ids', 'Free-form labels.', { optional: true }),
    ],
  },
  {
    set: 'documents',
    title: 'Documents',
    description: 'Files, folders and e-signatures.',
    entity: 'document',
    plural: 'documents',
    noun: 'document',
    statuses: ['draft', 'final', 'signed', 'archived'],
    fields: [
      f('title', 'string', 'Document title.'),
      f('folderId', 'string', 'Folder it is filed in.'),
      f('sourceUrl', 'url', 'Where the file content is fetched from.'),
      f('confidential', 'bool', "Restrict to the owner's team.", { optional: true }),
    ],
  },
  {
    set: 'calendar',
    title: 'Calendar',
    description: 'Meetings, rooms and availability.',
    entity: 'meeting',
    plural: 'meetings',
    noun: 'meeting',
    statuses: ['tentative', 'confirmed', 'cancelled'],
    fields: [
      f('subject', 'string', 'Meeting subject.'),
      f('startsAt', 'date', 'Start time (ISO 8601).'),
      f('durationMinutes', 'int', 'Length in minutes.'),
      f('attendeeEmails', 'ids', 'People invited.'),
      f('roomId', 'string', 'Room booked for it.', { optional: true }),
    ],
  },
  {
    set: 'payroll',
    title: 'Payroll',
    description: 'Pay runs, payslips and deductions.',
    entity: 'payslip',
    plural: 'payslips',
    noun: 'payslip',
    statuses: ['calculated', 'approved', 'paid'],
    fields: [
      f('employeeId', 'string', 'Employee paid.'),
      f('period', 'string', 'Pay period as YYYY-MM.'),
      f('grossCents', 'money', 'Gross pay.'),
      f('taxCode', 'string', 'Tax code applied.', { optional: true }),
    ],
  },
  {
    set: 'sales',
    title: 'Sales',
    description: 'Opportunities, pipeline and forecasts.',
    entity: 'opportunity',
    plural: 'opportunities',
    noun: 'sales opportunity',
    statuses: ['qualification', 'proposal', 'negotiation', 'won', 'lost'],
    fields: [
      f('accountId', 'string', 'Account the deal is with.'),
      f('amountCents', 'money', 'Expected deal value.'),
      f('closeDate', 'date', 'Expected close day.'),
      f('stage', 'enum', 'Pipeline stage.', { values: ['qualification', 'proposal', 'negotiation'] }),
      f('competitor', 'string', 'Main competitor in the deal.', { optional: true }),
    ],
  },
  {
    set: 'warehouse',
    title: 'Warehouse',
    description: 'Bin locations, picking and cycle counts.',
    entity: 'bin_location',
    plural: 'bin_locations',
    noun: 'bin location',
    statuses: ['available', 'full', 'blocked'],
    fields: [
      f('code', 'string', 'Aisle-rack-shelf code.'),
      f('zone', 'enum', 'Temperature zone.', { values: ['ambient', 'chilled', 'frozen'] }),
      f('capacityUnits', 'int', 'How many units fit.'),
      f('pickable', 'bool', 'Whether pickers may take stock from it.', { optional: true }),
    ],
  },
  {
    set: 'compliance',
    title: 'Compliance',
    description: 'Audits, findings and remediation plans.',
    entity: 'audit_finding',
    plural: 'audit_findings',
    noun: 'audit finding',
    statuses: ['open', 'remediating', 'verified', 'accepted_risk'],
    fields: [
      f('auditId', 'string', 'The audit that raised it.'),
      f('control', 'string', 'Control reference (e.g. ISO 27001 A.8.2).'),
      f('risk', 'enum', 'Assessed risk.', { values: ['low', 'medium', 'high'] }),
      f('dueDate', 'date', 'Remediation deadline.'),
      f('ownerEmail', 'email', 'Who remediates it.', { optional: true }),
    ],
  },
];

type Hints = { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };

interface Operation {
  name: (d: Domain) => string;
  description: (d: Domain) => string;
  fields: (d: Domain) => Field[];
  annotations: Hints;
}

const id = (d: Domain): Field => f('id', 'string', `Id of the ${d.noun}.`);
const statusFilter = (d: Domain): Field =>
  f('status', 'enum', `Only ${d.plural.replace(/_/g, ' ')} in this status.`, { values: d.statuses, optional: true });
const page = [
  f('page', 'int', 'Page number, from 1.', { optional: true }),
  f('pageSize', 'int', 'Items per page (at most 100).', { optional: true }),
];
const READ: Hints = { readOnlyHint: true, openWorldHint: false };
const WRITE: Hints = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
const DESTROY: Hints = { readOnlyHint: false, destructiveHint: true, openWorldHint: false };

export const OPERATIONS: readonly Operation[] = [
  {
    name: (d) => `list_${d.plural}`,
    description: (d) =>
      `List ${d.plural.replace(/_/g, ' ')}, newest first, optionally filtered by status and owner. ${d.description}`,
    fields: (d) => [
      statusFilter(d),
      f('ownerId', 'string', 'Only those owned by this user.', { optional: true }),
      f('createdAfter', 'date', 'Only those created on or after this day.', { optional: true }),
      ...page,
    ],
    annotations: READ,
  },
  {
    name: (d) => `get_${d.entity}`,
    description: (d) => `Get one ${d.noun} by id, with every field and its current status.`,
    fields: (d) => [id(d)],
    annotations: READ,
  },
  {
    name: (d) => `search_${d.plural}`,
    description: (d) => `Full-text search over ${d.plural.replace(/_/g, ' ')}: matches names, notes and references.`,
    fields: (d) => [
      f('query', 'string', 'Words to look for.'),
      statusFilter(d),
      f('limit', 'int', 'Most results to return.', { optional: true }),
    ],
    annotations: READ,
  },
  {
    name: (d) => `create_${d.entity}`,
    description: (d) => `Create a new ${d.noun}. Returns its id. Validation errors name the field to fix.`,
    fields: (d) => d.fields.map((x) => ({ ...x })),
    annotations: WRITE,
  },
  {
    name: (d) => `update_${d.entity}`,
    description: (d) => `Change fields of an existing ${d.noun}; fields left out keep their value.`,
    fields: (d) => [id(d), ...d.fields.map((x) => ({ ...x, optional: true }))],
    annotations: { ...WRITE, idempotentHint: true },
  },
  {
    name: (d) => `delete_${d.entity}`,
    description: (d) => `Permanently delete a ${d.noun} and its history. This cannot be undone.`,
    fields: (d) => [id(d), f('reason', 'text', 'Why it is deleted, kept in the audit log.')],
    annotations: DESTROY,
  },
  {
    name: (d) => `archive_${d.entity}`,
    description: (d) => `Archive a ${d.noun}: hidden from lists, kept for reporting, restorable.`,
    fields: (d) => [id(d)],
    annotations: { ...WRITE, idempotentHint: true },
  },
  {
    name: (d) => `export_${d.plural}`,
    description: (d) =>
      `Export ${d.plural.replace(/_/g, ' ')} of a date range as a file; returns a download link valid for one hour.`,
    fields: (d) => [
      f('format', 'enum', 'File format.', { values: ['csv', 'xlsx', 'json'] }),
      f('from', 'date', 'First day included.'),
      f('to', 'date', 'Last day included.'),
      statusFilter(d),
    ],
    annotations: READ,
  },
  {
    name: (d) => `import_${d.plural}`,
    description: (d) =>
      `Import ${d.plural.replace(/_/g, ' ')} from a CSV file at a URL; rows that fail validation are reported, not imported.`,
    fields: () => [
      f('sourceUrl', 'url', 'Where the CSV file is.'),
      f('mode', 'enum', 'Whether existing records are updated.', { values: ['create_only', 'upsert'] }),
      f('dryRun', 'bool', 'Validate without writing.', { optional: true }),
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
  {
    name: (d) => `assign_${d.entity}`,
    description: (d) => `Assign a ${d.noun} to a user, who is notified.`,
    fields: (d) => [
      id(d),
      f('assigneeId', 'string', 'User id of the new owner.'),
      f('notify', 'bool', 'Send the assignee an email.', { optional: true }),
    ],
    annotations: { ...WRITE, idempotentHint: true },
  },
  {
    name: (d) => `comment_on_${d.entity}`,
    description: (d) => `Add a comment to a ${d.noun}'s activity feed; mentions notify people.`,
    fields: (d) => [
      id(d),
      f('body', 'text', 'The comment (Markdown).'),
      f('internal', 'bool', 'Hide from external collaborators.', { optional: true }),
    ],
    annotations: WRITE,
  },
  {
    name: (d) => `approve_${d.entity}`,
    description: (d) => `Approve a ${d.noun} awaiting approval; the approval is recorded with your name.`,
    fields: (d) => [id(d), f('note', 'text', 'Approval note.', { optional: true })],
    annotations: WRITE,
  },
  {
    name: (d) => `${d.entity}_history`,
    description: (d) => `The change history of a ${d.noun}: who changed which field, and when.`,
    fields: (d) => [id(d), f('limit', 'int', 'Most changes to return.', { optional: true })],
    annotations: READ,
  },
  {
    name: (d) => `bulk_update_${d.plural}`,
    description: (d) =>
      `Set the status of many ${d.plural.replace(/_/g, ' ')} at once. Overwrites their current status.`,
    fields: (d) => [
      f('ids', 'ids', `Ids of the ${d.plural.replace(/_/g, ' ')}.`),
      f('status', 'enum', 'The new status.', { values: d.statuses }),
    ],
    annotations: DESTROY,
  },
  {
    name: (d) => `${d.entity}_stats`,
    description: (d) => `Counts and totals of ${d.plural.replace(/_/g, ' ')} grouped by status, owner or month.`,
    fields: () => [
      f('groupBy', 'enum', 'What to group by.', { values: ['status', 'owner', 'month'] }),
      f('from', 'date', 'First day included.', { optional: true }),
      f('to', 'date', 'Last day included.', { optional: true }),
    ],
    annotations: READ,
  },
];

const dtoCache = new Map<string, Type<unknown>>();

/** A class-validator DTO with the fields' rules and descriptions, built once per name. */
function dto(className: string, fields: readonly Field[]): Type<unknown> {
  const cached = dtoCache.get(className);
  if (cached) return cached;
  const cls = { [className]: class {} }[className] as Type<unknown>;
  const proto = cls.prototype as object;
  for (const field of fields) {
    const apply = (decorator: PropertyDecorator) => decorator(proto, field.name);
    const designType =
      field.type === 'int' || field.type === 'money'
        ? Number
        : field.type === 'bool'
          ? Boolean
          : field.type === 'ids'
            ? Array
            : String;
    Reflect.defineMetadata('design:type', designType, proto, field.name);
    if (field.optional) apply(IsOptional());
    switch (field.type) {
      case 'string':
        apply(IsString());
        apply(MaxLength(200));
        break;
      case 'text':
        apply(IsString());
        apply(MaxLength(5000));
        break;
      case 'int':
        apply(IsInt());
        apply(Min(1));
        apply(Max(100_000));
        break;
      case 'money':
        apply(IsInt());
        apply(Min(0));
        break;
      case 'bool':
        apply(IsBoolean());
        break;
      case 'date':
        apply(IsDateString());
        break;
      case 'email':
        apply(IsEmail());
        break;
      case 'url':
        apply(IsUrl({ require_tld: false }));
        break;
      case 'enum':
        apply(IsIn([...(field.values ?? [])]));
        break;
      case 'ids':
        apply(IsArray());
        apply(ArrayMaxSize(100));
        apply(IsString({ each: true }));
        break;
    }
    apply(SchemaProperty({ description: field.description }));
  }
  dtoCache.set(className, cls);
  return cls;
}

const pascal = (name: string): string => name.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

export interface CatalogTool {
  name: string;
  set: string;
  description: string;
  input: Type<unknown>;
  annotations: Hints;
}

/** The 300 tools, in a fixed order. */
export function catalogTools(): CatalogTool[] {
  const tools: CatalogTool[] = [];
  for (const domain of DOMAINS) {
    for (const operation of OPERATIONS) {
      const name = operation.name(domain);
      tools.push({
        name,
        set: domain.set,
        description: operation.description(domain),
        input: dto(`${pascal(name)}Dto`, operation.fields(domain)),
        annotations: operation.annotations,
      });
    }
  }
  return tools;
}

/** The 30 tools the scripted agent is asked to find and call: two per operation, spread over the domains. */
export const NAMED_TOOLS: readonly string[] = OPERATIONS.flatMap((operation, index) => [
  operation.name(DOMAINS[index % DOMAINS.length]!),
  operation.name(DOMAINS[(index + 7) % DOMAINS.length]!),
]);

/** The catalog's tool sets: one per domain. */
export const CATALOG_SETS: McpToolSetsOptions['sets'] = Object.fromEntries(
  DOMAINS.map((d) => [d.set, { title: d.title, description: d.description }]),
);

/** Registers the catalog's tools once discovery ran, each in its domain's set. */
@Injectable()
export class EnterpriseCatalog implements OnApplicationBootstrap {
  constructor(private readonly registry: McpRegistry) {}

  onApplicationBootstrap(): void {
    for (const tool of catalogTools()) {
      this.registry.addTool({
        name: tool.name,
        description: tool.description,
        input: tool.input,
        annotations: tool.annotations,
        sets: [tool.set],
        handler: () => `${tool.name}: done`,
      });
    }
  }
}
