/**
 * The token bench's fixture: sample 10's 300-tool enterprise catalog behind one McpModule, every
 * caller seeing every tool (`toolSets` configured, default `all`), progressive per request with
 * `?mode=progressive`.
 */
import { Module, type DynamicModule } from '@nestjs/common';
import { McpModule, type McpModuleOptions } from 'nestjs-model-context';
import { CATALOG_SETS, EnterpriseCatalog } from '../sample/10-toolsets/enterprise-catalog.js';

export { NAMED_TOOLS, catalogTools } from '../sample/10-toolsets/enterprise-catalog.js';

@Module({})
export class EnterpriseCatalogModule {
  static register(options: Partial<McpModuleOptions> = {}): DynamicModule {
    return {
      module: EnterpriseCatalogModule,
      imports: [
        McpModule.forRoot({
          name: 'enterprise-catalog',
          version: '1.0.0',
          toolSets: { sets: CATALOG_SETS },
          ...options,
        }),
      ],
      providers: [EnterpriseCatalog],
    };
  }
}
