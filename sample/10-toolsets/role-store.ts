import { Injectable } from '@nestjs/common';
import type { McpPrincipal } from 'nestjs-model-context';

/**
 * The sample's "database": users, their roles, and the tool sets each role may use. A real app
 * reads these from its own tables or a feature-flag service; the module caches the answer per
 * principal (`toolSets.cache`).
 */
@Injectable()
export class RoleStore {
  /** Demo bearer tokens (use your identity provider's verification in a real app). */
  readonly tokens: Readonly<Record<string, McpPrincipal>> = {
    'alice-token': { id: 'alice', claims: { name: 'Alice (accounting)' } },
    'bob-token': { id: 'bob', claims: { name: 'Bob (sales)' } },
    'carol-token': { id: 'carol', claims: { name: 'Carol (operations)' } },
  };

  private readonly rolesOfUser: Readonly<Record<string, readonly string[]>> = {
    alice: ['accountant'],
    bob: ['sales'],
    carol: ['operations', 'support'],
  };

  private readonly setsOfRole: Readonly<Record<string, readonly string[]>> = {
    accountant: ['billing', 'finance', 'payroll', 'procurement'],
    sales: ['crm', 'sales', 'marketing'],
    operations: ['inventory', 'shipping', 'warehouse', 'procurement'],
    support: ['support', 'crm'],
  };

  /** The sets a user may use: the union of its roles' sets (none for an unknown user). */
  async setsOf(userId: string): Promise<string[]> {
    const roles = this.rolesOfUser[userId] ?? [];
    return [...new Set(roles.flatMap((role) => this.setsOfRole[role] ?? []))];
  }
}
